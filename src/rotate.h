/* rotate.h -- the names of rotated files (shared with the tools); the
 * rotation itself is declared in writer.h */
#ifndef TW_ROTATE_H
#define TW_ROTATE_H

#include <stddef.h>
#include <stdint.h>

/* path with ".NNNNNN" (n, at least six digits) inserted before its
 * extension: trace.json -> trace.000001.json, t.json.gz -> t.000001.json.gz.
 * Returns 0 or -ENAMETOOLONG. */
int tw__rotated_name(char *out, size_t size, const char *path,
                     unsigned long n);

/* Open the directory holding path (with O_PATH if it cannot be read:
 * fsync of it then fails with EBADF).  Returns the fd or -errno. */
int tw__open_directory_of(const char *path);

#endif /* TW_ROTATE_H */
