/* replay.c -- run a fuzz target over files, without libFuzzer
 *
 * Link with one target (fuzz_format.c, fuzz_options.c or fuzz_json.c):
 *
 *   cc -o replay_format tests/fuzz/replay.c tests/fuzz/fuzz_format.c ...
 *   ./replay_format tests/fuzz/corpus/format [more files or directories]
 *
 * Every file named, and every regular file directly inside a directory
 * named (in name order), is read and passed once to
 * LLVMFuzzerTestOneInput.  A failed check aborts, as under libFuzzer.
 *
 * With no arguments, for make check: when built with
 * -DREPLAY_CORPUS='"tests/fuzz/corpus/format"' (a path relative to the
 * source tree) it replays $top_srcdir/REPLAY_CORPUS ($top_srcdir from the
 * environment, as AM_TESTS_ENVIRONMENT exports it; "." when unset).
 *
 * Exit status: 0 when every input ran, 1 if a file could not be read, 77
 * (skipped, for automake) when no input was found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long ran;

/* Run the target on one file; returns 0 or -1 if it cannot be read. */
static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, k;

  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (;;) {
    if (len == cap) {
      uint8_t *nb;
      cap = cap ? 2 * cap : 4096;
      if (!(nb = realloc(buf, cap))) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        free(buf);
        fclose(f);
        return -1;
      }
      buf = nb;
    }
    k = fread(buf + len, 1, cap - len, f);
    len += k;
    if (k == 0)
      break;
  }
  if (ferror(f)) {
    fprintf(stderr, "replay: %s: read error\n", path);
    free(buf);
    fclose(f);
    return -1;
  }
  fclose(f);
  /* Pass an exact-size copy, as libFuzzer does, so a read past the end
   * is seen by AddressSanitizer when it is on. */
  {
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
      free(buf);
      return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
  }
  ran++;
  return 0;
}

static int skip_dots(const struct dirent *e)
{
  return e->d_name[0] != '.';
}

static int run_path(const char *path)
{
  struct stat st;
  struct dirent **list;
  int n, rc = 0;

  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode))
    return run_file(path);
  n = scandir(path, &list, skip_dots, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (int i = 0; i < n; i++) {
    size_t len = strlen(path) + strlen(list[i]->d_name) + 2;
    char *full = malloc(len);
    if (full) {
      snprintf(full, len, "%s/%s", path, list[i]->d_name);
      if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && run_file(full))
        rc = -1;
      free(full);
    } else {
      rc = -1;
    }
    free(list[i]);
  }
  free(list);
  return rc;
}

int main(int argc, char **argv)
{
  int rc = 0;

  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++)
    if (run_path(argv[i]))
      rc = 1;
#ifdef REPLAY_CORPUS
  if (argc < 2) {
    const char *top = getenv("top_srcdir");
    size_t len;
    char *dir;
    if (!top || !*top)
      top = ".";
    len = strlen(top) + sizeof REPLAY_CORPUS + 1;
    if (!(dir = malloc(len)))
      return 1;
    snprintf(dir, len, "%s/%s", top, REPLAY_CORPUS);
    if (run_path(dir))
      rc = 1;
    free(dir);
  }
#endif
  printf("replay: %lu input%s\n", ran, ran == 1 ? "" : "s");
  if (rc == 0 && ran == 0)
    return 77;
  return rc;
}
