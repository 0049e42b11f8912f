/* runstat.c -- run a command, print its wall time and peak RSS
 *
 *   runstat PROGRAM [ARG...]
 *
 * Runs PROGRAM with its standard output sent to /dev/null and prints
 * "WALL_NS MAXRSS_KIB" on the standard output: the wall time from fork
 * to its exit, and the child's peak resident set (getrusage
 * RUSAGE_CHILDREN: the only child).  Exit status: the child's (1 if it
 * did not exit normally), 99 if it could not be run.  For make
 * bench-tools (bench/bench_commands.sh); not installed.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  struct rusage ru;
  uint64_t t0, t1;
  pid_t pid;
  int status;

  if (argc < 2) {
    fprintf(stderr, "usage: runstat PROGRAM [ARG...]\n");
    return 99;
  }
  t0 = now_ns();
  pid = fork();
  if (pid < 0) {
    perror("runstat: fork");
    return 99;
  }
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
      _exit(99);
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(99);
  }
  if (waitpid(pid, &status, 0) != pid) {
    perror("runstat: waitpid");
    return 99;
  }
  t1 = now_ns();
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0) {
    perror("runstat: getrusage");
    return 99;
  }
  printf("%llu %ld\n", (unsigned long long)(t1 - t0), ru.ru_maxrss);
  if (!WIFEXITED(status))
    return 1;
  return WEXITSTATUS(status);
}
