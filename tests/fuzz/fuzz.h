/* fuzz.h -- what the libFuzzer targets of tests/fuzz share
 *
 * Each target defines LLVMFuzzerTestOneInput.  Built with clang
 * -fsanitize=fuzzer it is a fuzzer; linked with replay.c instead (any C
 * compiler) it replays a corpus, for make check.
 *
 * A failed check prints what failed and abort()s, which libFuzzer reports
 * as a crash and saves the input.
 */
#ifndef TW_FUZZ_H
#define TW_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create */
#endif

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "target: file:line: message" and abort. */
static void fz_fail(const char *file, int line, const char *fmt, ...)
  __attribute__((noreturn, format(printf, 3, 4), unused));
static void fz_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "FUZZ CHECK FAILED at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

#define FZ_FAIL(...) fz_fail(__FILE__, __LINE__, __VA_ARGS__)
#define FZ_CHECK(cond, ...)                                              \
  do {                                                                   \
    if (!(cond))                                                         \
      fz_fail(__FILE__, __LINE__, "(" #cond ") " __VA_ARGS__);           \
  } while (0)

/* One anonymous regular file for the whole run (a memfd; a deleted
 * temporary file where memfd_create is missing), emptied and rewound
 * before each input so no input sees another's bytes. */
static int fz_file(void) __attribute__((unused));
static int fz_file(void)
{
  static int fd = -1;
  if (fd < 0) {
#ifdef MFD_CLOEXEC
    fd = memfd_create("tw-fuzz", MFD_CLOEXEC);
#endif
    if (fd < 0) {
      char path[] = "/tmp/tw-fuzz-XXXXXX";
      fd = mkstemp(path);
      if (fd >= 0)
        unlink(path);
    }
    if (fd < 0)
      FZ_FAIL("cannot create the scratch file: %s", strerror(errno));
  }
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
    FZ_FAIL("cannot reset the scratch file: %s", strerror(errno));
  return fd;
}

/* The whole content of fd (malloc'ed, NUL-terminated; free it). */
static char *fz_read_all(int fd, size_t *len) __attribute__((unused));
static char *fz_read_all(int fd, size_t *len)
{
  struct stat st;
  size_t n = 0;
  char *buf;

  if (fstat(fd, &st) != 0)
    FZ_FAIL("fstat: %s", strerror(errno));
  buf = malloc((size_t)st.st_size + 1);
  if (!buf)
    FZ_FAIL("out of memory reading %lld bytes", (long long)st.st_size);
  while (n < (size_t)st.st_size) {
    ssize_t k = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      FZ_FAIL("pread: %s", k ? strerror(errno) : "short file");
    n += (size_t)k;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Print up to max bytes of buf, escaped, to stderr (for failure reports). */
static void fz_dump(const char *what, const char *buf, size_t len)
  __attribute__((unused));
static void fz_dump(const char *what, const char *buf, size_t len)
{
  size_t max = 2000;
  fprintf(stderr, "%s (%zu bytes): \"", what, len);
  for (size_t i = 0; i < len && i < max; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (c == '\n')
      fputs("\\n", stderr);
    else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
      fprintf(stderr, "\\x%02x", c);
    else
      fputc(c, stderr);
  }
  fprintf(stderr, "\"%s\n", len > max ? "..." : "");
}

/* The nesting depth of a JSON text already known to be valid ("[[1]]" is
 * 2, a scalar 0): brackets outside strings. */
static unsigned fz_json_depth(const char *s, size_t n) __attribute__((unused));
static unsigned fz_json_depth(const char *s, size_t n)
{
  unsigned depth = 0, max = 0;
  int in_str = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '[' || c == '{') {
      if (++depth > max)
        max = depth;
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return max;
}

#endif /* TW_FUZZ_H */
