#include "tracewriter.h"
#include <stdio.h>
int main(void) { puts(tw_version()); return 0; }
