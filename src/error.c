/* error.c -- error codes to messages and names, from TW_ERRNO_MAP */
#include "internal.h"

#include <errno.h>
#include <string.h>

const char *tw_strerror(int code)
{
  switch (code) {
  case 0:
    return "success";
#define TW__ERR_MSG(name, value, msg) case TW_##name: return msg;
  TW_ERRNO_MAP(TW__ERR_MSG)
#undef TW__ERR_MSG
  default:
    break;
  }
  if (code < 0 && code > -4096) {
    /* strerrordesc_np is thread-safe and never allocates (glibc 2.32). */
    const char *s = strerrordesc_np(-code);
    if (s)
      return s;
  }
  return "unknown error";
}

const char *tw_err_name(int code)
{
  switch (code) {
  case 0:
    return "0";
#define TW__ERR_NAME(name, value, msg) case TW_##name: return "TW_" #name;
  TW_ERRNO_MAP(TW__ERR_NAME)
#undef TW__ERR_NAME
  default:
    break;
  }
  if (code < 0 && code > -4096) {
    const char *s = strerrorname_np(-code);
    if (s)
      return s;
  }
  return "UNKNOWN";
}

const char *tw_version(void)
{
  return TW_VERSION_STRING;
}
