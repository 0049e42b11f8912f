/* errors.h -- the tools' own error codes, one list
 *
 * Every function of the tools returns 0 (or a count), a negated errno
 * (-ENOENT, -ENOMEM ...), or one of these, each with the message that
 * explains it kept beside it by the function that failed.  Declared once
 * here, by value, with what each means (twt_errname gives its name, for
 * tests and messages); the modules' own names for them (TWT_READ_*,
 * TWT_SCAN_*, TWT_OUT_*) are these.
 */
#ifndef TWT_TOOLS_ERRORS_H
#define TWT_TOOLS_ERRORS_H

#define TWT_ERRNO_MAP(X)                                                  \
  X(TWT_ENOTTRACE, -3001, "not a trace: empty, or not a JSON array of "     \
    "events or an object with traceEvents, or not the library's layout "  \
    "where it must be")                                                   \
  X(TWT_ENORECORD, -3002, "a trace cut before the end of its first "       \
    "record: no record in it")                                            \
  X(TWT_ETOOBIG, -3003, "a record longer than the longest held "           \
    "(--max-line)")                                                       \
  X(TWT_EZLIB, -3004, "an internal zlib error")                            \
  X(TWT_ESHRANK, -3005, "the file shrank while it was read")

enum twt_errno {
#define TWT_ERRNO_ENUM(name, value, what) name = (value),
  TWT_ERRNO_MAP(TWT_ERRNO_ENUM)
#undef TWT_ERRNO_ENUM
};

/* The name of code ("TWT_ENOTTRACE"), or NULL if it is not one of these. */
static inline const char *twt_errname(int code)
{
  switch (code) {
#define TWT_ERRNO_NAME(name, value, what) case (value): return #name;
  TWT_ERRNO_MAP(TWT_ERRNO_NAME)
#undef TWT_ERRNO_NAME
  default:
    return (const char *)0;
  }
}

#endif /* TWT_TOOLS_ERRORS_H */
