/* stats.c -- "tracewriter stats" (not written yet) */
#include "config.h"

#include "command.h"

int tw_tool_stats_main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  return tw_cmd_error("stats", "not implemented yet");
}
