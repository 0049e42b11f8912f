// The public header must compile as C++ (-std=c++11 -pedantic-errors) and
// link against the C library.
#include "tracewriter.h"

#include <cstring>

int main()
{
  tw_options o;
  if (tw_options_init(&o) != 0)
    return 1;
  tw_arg args[] = { tw_arg_int("i", 1), tw_arg_double("d", 0.5),
                    tw_arg_bool("b", 1), tw_arg_null("z"),
                    tw_arg_json("j", "[1]"), tw_arg_strn("s", "ab", 1) };
  if (args[5].len != 1 || std::strcmp(tw_strerror(TW_EEVENT),
                                      "invalid event: missing or wrong field for its phase") != 0)
    return 1;
  {
    TW_SCOPE(nullptr, "cxx", "scope");
  }
  return tw_complete(nullptr, "c", "n", 0, 1, args, 6);
}
