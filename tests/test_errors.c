/* test_errors.c -- tw_strerror and tw_err_name, on every code
 *
 * The library carries its own table of errno names and messages (src/
 * error.c), so that it builds on glibc before 2.32 and on musl, which lack
 * strerrorname_np and strerrordesc_np.  Where the C library has them, the
 * table must agree with them on every code from 1 to 4095; elsewhere the
 * comparison is skipped and the fixed cases below still run.
 */
#include "config.h"

#include "testutil.h"

#include <errno.h>
#include <limits.h>

/* Every errno value the C library names: the same name and message. */
static void test_errno_table_matches_libc(void **state)
{
  (void)state;
#if defined(HAVE_STRERRORNAME_NP) && defined(HAVE_STRERRORDESC_NP)
  unsigned named = 0;
  int e;

  for (e = 1; e < 4096; e++) {
    const char *name = strerrorname_np(e), *desc = strerrordesc_np(e);

    if (strncmp(tw_err_name(-e), "TW_", 3) == 0) {
      assert_true(e > 1000);    /* the library's own, below any errno */
      assert_null(name);
      continue;
    }
    if (!name) {
      assert_string_equal(tw_err_name(-e), "UNKNOWN");
      assert_string_equal(tw_strerror(-e), "unknown error");
      continue;
    }
    if (strcmp(tw_err_name(-e), name) != 0 ||
        strcmp(tw_strerror(-e), desc) != 0)
      fail_msg("errno %d: tracewriter says %s \"%s\", the C library %s \"%s\"",
               e, tw_err_name(-e), tw_strerror(-e), name, desc);
    named++;
  }
  print_message("  %u errno values, each named as the C library names it\n",
                 named);
  assert_true(named >= 100);
#else
  print_message("  no strerrorname_np/strerrordesc_np in this C library\n");
  skip();
#endif
}

/* Fixed cases, on any C library. */
static void test_errno_known_codes(void **state)
{
  (void)state;
  assert_string_equal(tw_err_name(-ENOSPC), "ENOSPC");
  assert_string_equal(tw_strerror(-ENOSPC), "No space left on device");
  assert_string_equal(tw_err_name(-ENOENT), "ENOENT");
  assert_string_equal(tw_strerror(-ENOENT), "No such file or directory");
  assert_string_equal(tw_err_name(-EAGAIN), "EAGAIN");
  assert_string_equal(tw_err_name(-EWOULDBLOCK), "EAGAIN"); /* one value */
  assert_string_equal(tw_err_name(-EINVAL), "EINVAL");
  assert_string_equal(tw_strerror(-EINVAL), "Invalid argument");
  assert_string_equal(tw_err_name(-EFBIG), "EFBIG");
  assert_string_equal(tw_strerror(-EIO), "Input/output error");
}

/* The library's own codes come from TW_ERRNO_MAP; 0 is success. */
static void test_library_codes(void **state)
{
  (void)state;
  assert_string_equal(tw_strerror(0), "success");
  assert_string_equal(tw_err_name(0), "0");
#define CHECK_CODE(name, value, msg)                            \
  assert_int_equal(TW_##name, value);                           \
  assert_string_equal(tw_err_name(TW_##name), "TW_" #name);     \
  assert_string_equal(tw_strerror(TW_##name), msg);
  TW_ERRNO_MAP(CHECK_CODE)
#undef CHECK_CODE
}

/* Anything else: a static "unknown" answer, never NULL, never a crash. */
static void test_unknown_codes(void **state)
{
  static const int codes[] = { 1, 5, 4096, INT_MAX, -4096, -4095, -999,
                               -1000, -1015, -1999, -2000, INT_MIN,
                               INT_MIN + 1 };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    assert_string_equal(tw_strerror(codes[i]), "unknown error");
    assert_string_equal(tw_err_name(codes[i]), "UNKNOWN");
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_errno_table_matches_libc),
    cmocka_unit_test(test_errno_known_codes),
    cmocka_unit_test(test_library_codes),
    cmocka_unit_test(test_unknown_codes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
