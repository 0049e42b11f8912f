/* The public header must compile as strict C99 (-std=c99 -pedantic-errors)
 * and its inline constructors and scope macro must work from C. */
#include "tracewriter.h"

#include <string.h>

int main(void)
{
  tw_options o;
  tw_arg a = tw_arg_int("n", -5);
  tw_arg s = tw_arg_str("s", "x");
  tw_stats st;

  if (tw_options_init(&o) != 0 || o.struct_size != sizeof o)
    return 1;
  if (a.type != TW_ARG_INT || a.v.i != -5 || s.type != TW_ARG_STRING ||
      strcmp(s.v.s, "x") != 0 || s.len != TW_NUL_TERMINATED)
    return 1;
  {
    TW_SCOPE(NULL, "c", "n");    /* a NULL writer: an inert span */
  }
  if (tw_get_stats(NULL, &st) != 0 || st.events != 0)
    return 1;
  return tw_emit(NULL, NULL) == 0 ? 0 : 1;
}
