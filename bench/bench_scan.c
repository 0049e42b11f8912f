/* bench_scan.c -- the strict JSON checker alone, over a whole file
 *
 *   bench_scan FILE
 *
 * Reads FILE into memory and checks it as one JSON document with
 * tw__json_check (src/json.c, the one grammar: the writer's raw-JSON
 * check and the tools' readers), the way the tools' readers check
 * every byte they read.  Prints "valid" or "invalid at OFFSET".  For
 * make bench-tools (bench/bench_commands.sh), which counts its
 * instructions per byte under callgrind: the scanner's share of what a
 * command spends.  Exit status: 0 valid, 1 invalid, 99 cannot run.
 * Not installed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "json.h"

int main(int argc, char **argv)
{
  FILE *f;
  char *text = NULL;
  size_t n = 0, cap = 0, got, bad = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: bench_scan FILE\n");
    return 99;
  }
  if (!(f = fopen(argv[1], "rb"))) {
    perror(argv[1]);
    return 99;
  }
  do {
    if (cap - n < 65536) {
      char *t;
      cap = cap ? cap * 2 : 1 << 20;
      if (!(t = realloc(text, cap))) {
        fprintf(stderr, "bench_scan: out of memory\n");
        return 99;
      }
      text = t;
    }
    got = fread(text + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  if (ferror(f)) {
    perror(argv[1]);
    return 99;
  }
  fclose(f);
  if (tw__json_check(text, n, TW__JSON_DEPTH_MAX, &bad) != 0) {
    printf("invalid at %zu\n", bad);
    free(text);
    return 1;
  }
  printf("valid\n");
  free(text);
  return 0;
}
