/* error.c -- error codes to messages and names, from TW_ERRNO_MAP */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The names and messages of the errno values, for tw_err_name and
 * tw_strerror.  The C library's own (strerrorname_np, strerrordesc_np)
 * exist only in glibc 2.32 and later; strerror is not thread-safe for
 * every code, and strerror_r writes into the caller's buffer, while these
 * functions return static strings.  So the library carries the table: the
 * codes of Linux with glibc's messages (taken from glibc 2.36), the same
 * on every C library.  tests/test_errors.c compares it with glibc's
 * functions, code by code, wherever they exist.  The values come from
 * <errno.h>, so each architecture gets its own numbers. */
struct errno_text {
  int code;
  const char *name;        /* "ENOSPC" */
  const char *text;        /* "No space left on device" */
};

#define ERRNO_ROW(code, text) { code, #code, text },
static const struct errno_text errno_texts[] = {
  ERRNO_ROW(EPERM, "Operation not permitted")
  ERRNO_ROW(ENOENT, "No such file or directory")
  ERRNO_ROW(ESRCH, "No such process")
  ERRNO_ROW(EINTR, "Interrupted system call")
  ERRNO_ROW(EIO, "Input/output error")
  ERRNO_ROW(ENXIO, "No such device or address")
  ERRNO_ROW(E2BIG, "Argument list too long")
  ERRNO_ROW(ENOEXEC, "Exec format error")
  ERRNO_ROW(EBADF, "Bad file descriptor")
  ERRNO_ROW(ECHILD, "No child processes")
  ERRNO_ROW(EAGAIN, "Resource temporarily unavailable")
  ERRNO_ROW(ENOMEM, "Cannot allocate memory")
  ERRNO_ROW(EACCES, "Permission denied")
  ERRNO_ROW(EFAULT, "Bad address")
  ERRNO_ROW(ENOTBLK, "Block device required")
  ERRNO_ROW(EBUSY, "Device or resource busy")
  ERRNO_ROW(EEXIST, "File exists")
  ERRNO_ROW(EXDEV, "Invalid cross-device link")
  ERRNO_ROW(ENODEV, "No such device")
  ERRNO_ROW(ENOTDIR, "Not a directory")
  ERRNO_ROW(EISDIR, "Is a directory")
  ERRNO_ROW(EINVAL, "Invalid argument")
  ERRNO_ROW(ENFILE, "Too many open files in system")
  ERRNO_ROW(EMFILE, "Too many open files")
  ERRNO_ROW(ENOTTY, "Inappropriate ioctl for device")
  ERRNO_ROW(ETXTBSY, "Text file busy")
  ERRNO_ROW(EFBIG, "File too large")
  ERRNO_ROW(ENOSPC, "No space left on device")
  ERRNO_ROW(ESPIPE, "Illegal seek")
  ERRNO_ROW(EROFS, "Read-only file system")
  ERRNO_ROW(EMLINK, "Too many links")
  ERRNO_ROW(EPIPE, "Broken pipe")
  ERRNO_ROW(EDOM, "Numerical argument out of domain")
  ERRNO_ROW(ERANGE, "Numerical result out of range")
  ERRNO_ROW(EDEADLK, "Resource deadlock avoided")
  ERRNO_ROW(ENAMETOOLONG, "File name too long")
  ERRNO_ROW(ENOLCK, "No locks available")
  ERRNO_ROW(ENOSYS, "Function not implemented")
  ERRNO_ROW(ENOTEMPTY, "Directory not empty")
  ERRNO_ROW(ELOOP, "Too many levels of symbolic links")
  ERRNO_ROW(ENOMSG, "No message of desired type")
  ERRNO_ROW(EIDRM, "Identifier removed")
  ERRNO_ROW(ECHRNG, "Channel number out of range")
  ERRNO_ROW(EL2NSYNC, "Level 2 not synchronized")
  ERRNO_ROW(EL3HLT, "Level 3 halted")
  ERRNO_ROW(EL3RST, "Level 3 reset")
  ERRNO_ROW(ELNRNG, "Link number out of range")
  ERRNO_ROW(EUNATCH, "Protocol driver not attached")
  ERRNO_ROW(ENOCSI, "No CSI structure available")
  ERRNO_ROW(EL2HLT, "Level 2 halted")
  ERRNO_ROW(EBADE, "Invalid exchange")
  ERRNO_ROW(EBADR, "Invalid request descriptor")
  ERRNO_ROW(EXFULL, "Exchange full")
  ERRNO_ROW(ENOANO, "No anode")
  ERRNO_ROW(EBADRQC, "Invalid request code")
  ERRNO_ROW(EBADSLT, "Invalid slot")
  ERRNO_ROW(EBFONT, "Bad font file format")
  ERRNO_ROW(ENOSTR, "Device not a stream")
  ERRNO_ROW(ENODATA, "No data available")
  ERRNO_ROW(ETIME, "Timer expired")
  ERRNO_ROW(ENOSR, "Out of streams resources")
  ERRNO_ROW(ENONET, "Machine is not on the network")
  ERRNO_ROW(ENOPKG, "Package not installed")
  ERRNO_ROW(EREMOTE, "Object is remote")
  ERRNO_ROW(ENOLINK, "Link has been severed")
  ERRNO_ROW(EADV, "Advertise error")
  ERRNO_ROW(ESRMNT, "Srmount error")
  ERRNO_ROW(ECOMM, "Communication error on send")
  ERRNO_ROW(EPROTO, "Protocol error")
  ERRNO_ROW(EMULTIHOP, "Multihop attempted")
  ERRNO_ROW(EDOTDOT, "RFS specific error")
  ERRNO_ROW(EBADMSG, "Bad message")
  ERRNO_ROW(EOVERFLOW, "Value too large for defined data type")
  ERRNO_ROW(ENOTUNIQ, "Name not unique on network")
  ERRNO_ROW(EBADFD, "File descriptor in bad state")
  ERRNO_ROW(EREMCHG, "Remote address changed")
  ERRNO_ROW(ELIBACC, "Can not access a needed shared library")
  ERRNO_ROW(ELIBBAD, "Accessing a corrupted shared library")
  ERRNO_ROW(ELIBSCN, ".lib section in a.out corrupted")
  ERRNO_ROW(ELIBMAX, "Attempting to link in too many shared libraries")
  ERRNO_ROW(ELIBEXEC, "Cannot exec a shared library directly")
  ERRNO_ROW(EILSEQ, "Invalid or incomplete multibyte or wide character")
  ERRNO_ROW(ERESTART, "Interrupted system call should be restarted")
  ERRNO_ROW(ESTRPIPE, "Streams pipe error")
  ERRNO_ROW(EUSERS, "Too many users")
  ERRNO_ROW(ENOTSOCK, "Socket operation on non-socket")
  ERRNO_ROW(EDESTADDRREQ, "Destination address required")
  ERRNO_ROW(EMSGSIZE, "Message too long")
  ERRNO_ROW(EPROTOTYPE, "Protocol wrong type for socket")
  ERRNO_ROW(ENOPROTOOPT, "Protocol not available")
  ERRNO_ROW(EPROTONOSUPPORT, "Protocol not supported")
  ERRNO_ROW(ESOCKTNOSUPPORT, "Socket type not supported")
  ERRNO_ROW(EOPNOTSUPP, "Operation not supported")
  ERRNO_ROW(EPFNOSUPPORT, "Protocol family not supported")
  ERRNO_ROW(EAFNOSUPPORT, "Address family not supported by protocol")
  ERRNO_ROW(EADDRINUSE, "Address already in use")
  ERRNO_ROW(EADDRNOTAVAIL, "Cannot assign requested address")
  ERRNO_ROW(ENETDOWN, "Network is down")
  ERRNO_ROW(ENETUNREACH, "Network is unreachable")
  ERRNO_ROW(ENETRESET, "Network dropped connection on reset")
  ERRNO_ROW(ECONNABORTED, "Software caused connection abort")
  ERRNO_ROW(ECONNRESET, "Connection reset by peer")
  ERRNO_ROW(ENOBUFS, "No buffer space available")
  ERRNO_ROW(EISCONN, "Transport endpoint is already connected")
  ERRNO_ROW(ENOTCONN, "Transport endpoint is not connected")
  ERRNO_ROW(ESHUTDOWN, "Cannot send after transport endpoint shutdown")
  ERRNO_ROW(ETOOMANYREFS, "Too many references: cannot splice")
  ERRNO_ROW(ETIMEDOUT, "Connection timed out")
  ERRNO_ROW(ECONNREFUSED, "Connection refused")
  ERRNO_ROW(EHOSTDOWN, "Host is down")
  ERRNO_ROW(EHOSTUNREACH, "No route to host")
  ERRNO_ROW(EALREADY, "Operation already in progress")
  ERRNO_ROW(EINPROGRESS, "Operation now in progress")
  ERRNO_ROW(ESTALE, "Stale file handle")
  ERRNO_ROW(EUCLEAN, "Structure needs cleaning")
  ERRNO_ROW(ENOTNAM, "Not a XENIX named type file")
  ERRNO_ROW(ENAVAIL, "No XENIX semaphores available")
  ERRNO_ROW(EISNAM, "Is a named type file")
  ERRNO_ROW(EREMOTEIO, "Remote I/O error")
  ERRNO_ROW(EDQUOT, "Disk quota exceeded")
  ERRNO_ROW(ENOMEDIUM, "No medium found")
  ERRNO_ROW(EMEDIUMTYPE, "Wrong medium type")
  ERRNO_ROW(ECANCELED, "Operation canceled")
  ERRNO_ROW(ENOKEY, "Required key not available")
  ERRNO_ROW(EKEYEXPIRED, "Key has expired")
  ERRNO_ROW(EKEYREVOKED, "Key has been revoked")
  ERRNO_ROW(EKEYREJECTED, "Key was rejected by service")
  ERRNO_ROW(EOWNERDEAD, "Owner died")
  ERRNO_ROW(ENOTRECOVERABLE, "State not recoverable")
#ifdef ERFKILL
  ERRNO_ROW(ERFKILL, "Operation not possible due to RF-kill")
#endif
#ifdef EHWPOISON
  ERRNO_ROW(EHWPOISON, "Memory page has hardware error")
#endif
};
#undef ERRNO_ROW

/* The entry of errno value e, or NULL if the table lacks it. */
static const struct errno_text *errno_text(int e)
{
  size_t i;

  for (i = 0; i < sizeof errno_texts / sizeof errno_texts[0]; i++)
    if (errno_texts[i].code == e)
      return &errno_texts[i];
  return NULL;
}

const char *tw_strerror(int code)
{
  const struct errno_text *t;

  switch (code) {
  case 0:
    return "success";
#define TW__ERR_MSG(name, value, msg) case TW_##name: return msg;
  TW_ERRNO_MAP(TW__ERR_MSG)
#undef TW__ERR_MSG
  default:
    break;
  }
  if (code < 0 && code > -4096 && (t = errno_text(-code)) != NULL)
    return t->text;
  return "unknown error";
}

const char *tw_err_name(int code)
{
  const struct errno_text *t;

  switch (code) {
  case 0:
    return "0";
#define TW__ERR_NAME(name, value, msg) case TW_##name: return "TW_" #name;
  TW_ERRNO_MAP(TW__ERR_NAME)
#undef TW__ERR_NAME
  default:
    break;
  }
  if (code < 0 && code > -4096 && (t = errno_text(-code)) != NULL)
    return t->name;
  return "UNKNOWN";
}

const char *tw_version(void)
{
  return TW_VERSION_STRING;
}

#ifdef TW_DEBUG
/* A check of TW__ASSERT failed: say which and where, with write(2) only
 * (it may run in a thread holding any lock, or in the crash hook), and
 * abort. */
void tw__assert_fail(const char *what, const char *file, int line)
{
  char buf[512], num[16];
  size_t n = 0, k = sizeof num;
  const char *parts[] = { "tracewriter: ", file, ":", NULL,
                          ": the concurrency contract fails: ", what, "\n" };

  do
    num[--k] = (char)('0' + line % 10);
  while ((line /= 10) > 0 && k > 0);
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    const char *s = parts[i] ? parts[i] : num + k;
    size_t len = parts[i] ? strlen(s) : sizeof num - k;
    if (len > sizeof buf - n)
      len = sizeof buf - n;
    memcpy(buf + n, s, len);
    n += len;
  }
  (void)!write(2, buf, n);
  abort();
}
#endif
