/* tracewriter.hpp -- the C++17 binding of libtracewriter
 *
 * A header-only layer over the C interface of tracewriter.h, for C++17 and
 * later: a move-only tw::Writer that closes its writer, a scoped tw::Span,
 * arguments written as initializer lists of typed values, and error codes
 * as small values.
 *
 *   #include <tracewriter.hpp>
 *
 *   tw::Status st;
 *   tw::Writer w = tw::Writer::open("trace.json", "flush=100ms", &st);
 *   if (!w)
 *     std::fprintf(stderr, "trace.json: %s\n", st.message());
 *   {
 *     tw::Span s(w, "llm", "decode", {{"tokens", 4}, {"layer", "attn"}});
 *     w.counter("llm", "kv_cache", {{"used", 812}, {"free", 212}});
 *   }                                      // one 'X' event, with its args
 *   tw::Error err = w.close();             // the first error, if any
 *
 * Everything the C header says holds here too (its conventions, thread
 * safety, the meaning of every option and event field); this file adds
 * only what C++ changes.  The C names stay available: tracewriter.h is
 * included, and get() gives the tw_writer * of any handle.
 *
 * Conventions of the binding:
 *
 *  - No exceptions: nothing here throws, every function is noexcept, and
 *    the header compiles and works with -fno-exceptions.  Functions that
 *    can fail return a tw::Error (the C library's code), opening returns a
 *    writer that is null on failure and fills a tw::Status.
 *  - A null writer is a valid, disabled writer, as in C: every call on a
 *    null tw::Writer or tw::WriterRef returns a success Error at once,
 *    without formatting anything, and a tw::Span on it is inert.
 *  - No allocation per event: arguments are copied to the stack, except
 *    for calls with more than 16 arguments and spans whose arguments do
 *    not fit in the span (see tw::Span), which allocate one block with
 *    new (std::nothrow) and report -ENOMEM if it fails.
 *  - Names (categories, event names, argument names, paths) are
 *    NUL-terminated: a const char * (a string literal) or a std::string
 *    (see tw::CStr).  A std::string_view is refused there at compile time,
 *    because the C library has no length for names.  Argument *values* may
 *    be std::string_view: they carry their length.
 *  - Outside tw::Span, the binding keeps no pointer past the call: any
 *    string, even a temporary, needs to live only until the call returns.
 *
 * Thread safety is the C library's: any number of threads may emit events
 * on one writer at once (the event functions are const), but moving,
 * closing or assigning a tw::Writer must not race with other calls on it.
 */
#ifndef TRACEWRITER_HPP
#define TRACEWRITER_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
# error "tracewriter.hpp needs C++17 or later (for C, include tracewriter.h)"
#endif

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

/* tracewriter.h is C: its inline tw_arg_* constructors use C casts and
 * NULL, which -Wold-style-cast and -Wzero-as-null-pointer-constant (clang)
 * report in C++ code.  They are silenced for the C header only. */
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC diagnostic push
# pragma GCC diagnostic ignored "-Wold-style-cast"
# pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
#endif
#include "tracewriter.h"

namespace tw {

/* TW_NUL_TERMINATED without its C cast. */
inline constexpr std::size_t nul_terminated = static_cast<std::size_t>(-1);
static_assert(nul_terminated == TW_NUL_TERMINATED, "TW_NUL_TERMINATED");

} // namespace tw
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC diagnostic pop
#endif

namespace tw {

/* ------------------------------------------------------------------------
 * Errors
 */

/* An error code of the C library: 0 for success, else a negated errno or
 * a TW_E* code.  As with std::error_code, it converts to true when it holds
 * an error:
 *
 *   if (tw::Error err = w.flush())
 *     log("trace: %s", err.message());
 *
 * It compares equal to an int code: err == TW_EUTF8, err == -ENOSPC. */
class Error {
public:
  constexpr Error() noexcept : code_(0) {}
  constexpr explicit Error(int code) noexcept : code_(code) {}

  /* The code: 0, -errno or TW_E*. */
  constexpr int code() const noexcept { return code_; }
  /* True when there is no error. */
  constexpr bool ok() const noexcept { return code_ == 0; }
  /* True when there is an error. */
  constexpr explicit operator bool() const noexcept { return code_ != 0; }
  /* tw_strerror(code()): a static message, never freed. */
  const char *message() const noexcept { return tw_strerror(code_); }
  /* tw_err_name(code()): "TW_EUTF8", "ENOSPC", "0"... */
  const char *name() const noexcept { return tw_err_name(code_); }

  friend constexpr bool operator==(Error a, Error b) noexcept
  { return a.code_ == b.code_; }
  friend constexpr bool operator!=(Error a, Error b) noexcept
  { return a.code_ != b.code_; }
  friend constexpr bool operator==(Error a, int b) noexcept
  { return a.code_ == b; }
  friend constexpr bool operator!=(Error a, int b) noexcept
  { return a.code_ != b; }
  friend constexpr bool operator==(int a, Error b) noexcept
  { return a == b.code_; }
  friend constexpr bool operator!=(int a, Error b) noexcept
  { return a != b.code_; }

private:
  int code_;
};

class Writer;
struct Options;
class Status;
inline Status global_status() noexcept;

/* Why opening a writer (or parsing options) failed: the code, and a
 * message.  For a bad options string the message is tw_options_parse's,
 * naming the bad key or value ("unknown option 'bogus'"); otherwise it is
 * tw_strerror's.  It is held in the Status itself (at most
 * detail_capacity - 1 bytes, cut beyond), so it stays valid as long as the
 * Status does. */
class Status {
public:
  static constexpr std::size_t detail_capacity = 256;

  Status() noexcept : code_(0) { detail_[0] = '\0'; }

  constexpr int code() const noexcept { return code_; }
  constexpr bool ok() const noexcept { return code_ == 0; }
  constexpr explicit operator bool() const noexcept { return code_ != 0; }
  /* The code as a tw::Error (a Status also converts to one). */
  constexpr Error error() const noexcept { return Error(code_); }
  constexpr operator Error() const noexcept { return Error(code_); }
  /* The parser's message if there is one, else tw_strerror(code()). */
  const char *message() const noexcept
  { return detail_[0] ? detail_ : tw_strerror(code_); }
  const char *name() const noexcept { return tw_err_name(code_); }

private:
  friend class Writer;
  friend struct Options;
  friend Status global_status() noexcept;

  void set(int code, const char *detail = nullptr) noexcept
  {
    code_ = code;
    detail_[0] = '\0';
    if (detail && code) {
      std::size_t n = std::strlen(detail);
      if (n >= detail_capacity)
        n = detail_capacity - 1;
      std::memcpy(detail_, detail, n);
      detail_[n] = '\0';
    }
  }

  int code_;
  char detail_[detail_capacity];
};

/* ------------------------------------------------------------------------
 * Strings and arguments
 */

/* A borrowed, NUL-terminated string for a name, a category, a path or an
 * options string: converts from const char * (NULL too, where the C
 * function takes NULL), std::string and nullptr.  Not from
 * std::string_view, which need not be NUL-terminated: pass
 * std::string(view) instead. */
class CStr {
public:
  constexpr CStr() noexcept : s_(nullptr) {}
  constexpr CStr(std::nullptr_t) noexcept : s_(nullptr) {}
  constexpr CStr(const char *s) noexcept : s_(s) {}
  CStr(const std::string &s) noexcept : s_(s.c_str()) {}
  CStr(std::string_view) = delete;

  constexpr const char *c_str() const noexcept { return s_; }

private:
  const char *s_;
};

/* A raw JSON argument value, checked by the library (strict RFC 8259) and
 * written as it is; make one with tw::json(). */
struct Json {
  const char *text;     /* NULL: written as null */
  std::size_t len;      /* bytes, or tw::nul_terminated */
};

inline Json json(const char *text) noexcept { return Json{text, nul_terminated}; }
inline Json json(std::string_view text) noexcept
{
  return Json{text.data() ? text.data() : "", text.size()};
}

namespace detail {

/* Character types are not numbers: {"c", 'x'} does not compile.  signed
 * char and unsigned char (int8_t, uint8_t) are numbers. */
template <class T> struct is_char_type : std::false_type {};
template <> struct is_char_type<char> : std::true_type {};
template <> struct is_char_type<wchar_t> : std::true_type {};
template <> struct is_char_type<char16_t> : std::true_type {};
template <> struct is_char_type<char32_t> : std::true_type {};
#if defined(__cpp_char8_t)
template <> struct is_char_type<char8_t> : std::true_type {};
#endif
template <class T>
inline constexpr bool is_char_v = is_char_type<std::remove_cv_t<T>>::value;

template <class T>
inline constexpr bool is_number_v = std::is_integral_v<T> &&
  !std::is_same_v<T, bool> && !is_char_v<T> && sizeof(T) <= 8;
template <class T>
inline constexpr bool is_signed_v = is_number_v<T> && std::is_signed_v<T>;
template <class T>
inline constexpr bool is_unsigned_v = is_number_v<T> && std::is_unsigned_v<T>;

/* An enum's value as its underlying type (a char-based enum as int). */
template <class E>
constexpr auto enum_value(E e) noexcept
{
  using U = std::underlying_type_t<E>;
  if constexpr (is_char_v<U>)
    return static_cast<int>(e);
  else
    return static_cast<U>(e);
}

} // namespace detail

/* One typed argument, built from a name and a value, most often inside an
 * initializer list: {{"tokens", 4}, {"layer", "attn"}, {"p", 0.5}}.  The
 * value's C++ type picks the JSON type, with no implicit conversion in
 * between:
 *
 *   signed integers (signed char ... long long)     -> TW_ARG_INT (int64)
 *   unsigned integers (unsigned char ... uint64_t)  -> TW_ARG_UINT (uint64)
 *   enums                                            -> their underlying type
 *   float, double, long double                      -> TW_ARG_DOUBLE
 *   bool                                             -> TW_ARG_BOOL
 *   const char * (NUL-terminated; NULL: null)        -> TW_ARG_STRING
 *   std::string, std::string_view (their length:
 *     embedded NULs are kept)                        -> TW_ARG_STRING
 *   nullptr                                          -> TW_ARG_NULL
 *   tw::json("[1,2]")                                -> TW_ARG_JSON
 *
 * Refused at compile time: char, wchar_t, char16_t, char32_t (a character
 * is not a number: write std::string_view(&c, 1) or int(c)), pointers
 * other than to char (they would otherwise turn into bool), and integers
 * wider than 64 bits.
 *
 * An Arg points to its name and string value, it does not copy them: they
 * must live as long as the Arg, which inside a call's initializer list is
 * until the call returns (a temporary std::string is fine).  tw::Span
 * copies them. */
class Arg {
public:
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Arg(CStr name, T v) noexcept : a_(head(name, TW_ARG_BOOL))
  { a_.v.b = v ? 1 : 0; }

  template <class T, std::enable_if_t<detail::is_signed_v<T>, int> = 0>
  Arg(CStr name, T v) noexcept : a_(head(name, TW_ARG_INT))
  { a_.v.i = v; }

  template <class T, std::enable_if_t<detail::is_unsigned_v<T>, int> = 0>
  Arg(CStr name, T v) noexcept : a_(head(name, TW_ARG_UINT))
  { a_.v.u = v; }

  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Arg(CStr name, T v) noexcept : a_(head(name, TW_ARG_DOUBLE))
  {
    if constexpr (std::is_same_v<T, double>)
      a_.v.d = v;
    else
      a_.v.d = static_cast<double>(v);   /* float, long double */
  }

  template <class T, std::enable_if_t<std::is_enum_v<T>, int> = 0>
  Arg(CStr name, T v) noexcept : Arg(name, detail::enum_value(v)) {}

  Arg(CStr name, const char *v) noexcept
    : a_(head(name, TW_ARG_STRING, nul_terminated))
  { a_.v.s = v; }
  Arg(CStr name, const std::string &v) noexcept
    : a_(head(name, TW_ARG_STRING, v.size()))
  { a_.v.s = v.data(); }
  Arg(CStr name, std::string_view v) noexcept
    : a_(head(name, TW_ARG_STRING, v.size()))
  { a_.v.s = v.data() ? v.data() : ""; }   /* a default view is "" */
  Arg(CStr name, std::nullptr_t) noexcept : a_(head(name, TW_ARG_NULL)) {}
  Arg(CStr name, Json v) noexcept : a_(head(name, TW_ARG_JSON, v.len))
  { a_.v.s = v.text; }

  template <class T, std::enable_if_t<detail::is_char_v<T>, int> = 0>
  Arg(CStr name, T v) = delete;
  template <class T, std::enable_if_t<!detail::is_char_v<T>, int> = 0>
  Arg(CStr name, T *v) = delete;

  /* The C argument. */
  const tw_arg &c_arg() const noexcept { return a_; }

private:
  static tw_arg head(CStr name, int type, std::size_t len = 0) noexcept
  {
    tw_arg a;
    a.name = name.c_str();
    a.type = type;
    a.len = len;
    a.v.s = nullptr;
    return a;
  }

  tw_arg a_;
};

/* The arguments of one event, in order. */
using Args = std::initializer_list<Arg>;

/* Instant scopes. */
enum class Scope : char { thread = 't', process = 'p', global = 'g' };

namespace detail {

/* The tw_arg array of a call: on the stack up to inline_count arguments,
 * else one block from new (std::nothrow); data() is NULL if that failed. */
class ArgArray {
public:
  static constexpr std::size_t inline_count = 16;

  explicit ArgArray(Args args) noexcept : p_(buf_), n_(args.size())
  {
    if (n_ > inline_count)
      p_ = new (std::nothrow) tw_arg[n_];
    if (p_) {
      std::size_t i = 0;
      for (const Arg &a : args)
        p_[i++] = a.c_arg();
    }
  }
  ~ArgArray()
  {
    if (p_ != buf_)
      delete[] p_;
  }
  ArgArray(const ArgArray &) = delete;
  ArgArray &operator=(const ArgArray &) = delete;

  const tw_arg *data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }

private:
  tw_arg buf_[inline_count];
  tw_arg *p_;
  std::size_t n_;
};

/* Calls f(w, args, nargs) with the C arguments, or does nothing for a
 * null writer. */
template <class F>
inline Error with_args(tw_writer *w, Args args, F f) noexcept
{
  if (!w)
    return Error();
  if (args.size() == 0)
    return Error(f(w, nullptr, 0));
  ArgArray a(args);
  if (!a.data())
    return Error(-ENOMEM);
  return Error(f(w, a.data(), a.size()));
}

/* The event functions, shared by tw::Writer and tw::WriterRef: D has
 * get(), the tw_writer * (NULL for a disabled writer).  Each is the C
 * function of the same name (tw_instant, tw_counter...): see tracewriter.h
 * and tw_complete(3) for what it writes; a null writer returns Error() at
 * once.  Times are nanoseconds of tw::now_ns(). */
template <class D>
class Emitter {
public:
  /* tw_flush: commit. */
  Error flush() const noexcept { return Error(tw_flush(w())); }
  /* tw_errcode: the sticky error. */
  Error errcode() const noexcept { return Error(tw_errcode(w())); }
  /* tw_get_stats: the counters (all zero for a null writer). */
  tw_stats stats() const noexcept
  {
    tw_stats s{};
    (void)tw_get_stats(w(), &s);
    return s;
  }

  /* 'X' from ts_ns, lasting dur_ns. */
  Error complete(CStr cat, CStr name, std::uint64_t ts_ns,
                 std::uint64_t dur_ns, Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_complete(p, cat.c_str(), name.c_str(), ts_ns, dur_ns, a, n);
    });
  }
  /* 'B' and 'E' now, on the calling thread (tw::Span is usually better:
   * one 'X' that cannot be mispaired). */
  Error begin(CStr cat, CStr name, Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_begin(p, cat.c_str(), name.c_str(), a, n);
    });
  }
  Error end(CStr cat, CStr name, Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_end(p, cat.c_str(), name.c_str(), a, n);
    });
  }
  /* Instant now, thread-scoped unless a scope is given. */
  Error instant(CStr cat, CStr name, Args args = {}) const noexcept
  {
    return instant(cat, name, Scope::thread, args);
  }
  Error instant(CStr cat, CStr name, Scope scope,
                Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_instant(p, cat.c_str(), name.c_str(),
                        static_cast<char>(scope), a, n);
    });
  }
  /* Counter now: each argument is one series, numbers only:
   * w.counter("mem", "kv", {{"used", used}, {"free", free}}). */
  Error counter(CStr cat, CStr name, Args series) const noexcept
  {
    return with_args(w(), series, [&](tw_writer *p, const tw_arg *a,
                                      std::size_t n) {
      return tw_counter(p, cat.c_str(), name.c_str(), a, n);
    });
  }
  /* Async (nestable) begin, instant and end now, keyed by cat and id. */
  Error async_begin(CStr cat, CStr name, std::uint64_t id,
                    Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_async_begin(p, cat.c_str(), name.c_str(), id, a, n);
    });
  }
  Error async_instant(CStr cat, CStr name, std::uint64_t id,
                      Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_async_instant(p, cat.c_str(), name.c_str(), id, a, n);
    });
  }
  Error async_end(CStr cat, CStr name, std::uint64_t id,
                  Args args = {}) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      return tw_async_end(p, cat.c_str(), name.c_str(), id, a, n);
    });
  }
  /* Flow start, step and end now on the calling thread; the end binds to
   * the enclosing slice. */
  Error flow_start(CStr cat, CStr name, std::uint64_t id) const noexcept
  { return Error(tw_flow_start(w(), cat.c_str(), name.c_str(), id)); }
  Error flow_step(CStr cat, CStr name, std::uint64_t id) const noexcept
  { return Error(tw_flow_step(w(), cat.c_str(), name.c_str(), id)); }
  Error flow_end(CStr cat, CStr name, std::uint64_t id) const noexcept
  { return Error(tw_flow_end(w(), cat.c_str(), name.c_str(), id)); }
  /* Metadata: names, sort indexes and labels of this process and the
   * calling thread. */
  Error process_name(CStr name) const noexcept
  { return Error(tw_process_name(w(), name.c_str())); }
  Error thread_name(CStr name) const noexcept
  { return Error(tw_thread_name(w(), name.c_str())); }
  Error process_sort_index(std::int64_t index) const noexcept
  { return Error(tw_process_sort_index(w(), index)); }
  Error thread_sort_index(std::int64_t index) const noexcept
  { return Error(tw_thread_sort_index(w(), index)); }
  Error process_labels(CStr labels) const noexcept
  { return Error(tw_process_labels(w(), labels.c_str())); }
  /* Mark ('R') now. */
  Error mark(CStr cat, CStr name) const noexcept
  { return Error(tw_mark(w(), cat.c_str(), name.c_str())); }
  /* Any event (tw_emit): start from a zeroed tw_event (tw_event ev{};).
   * The second form writes the given arguments instead of ev's. */
  Error emit(const tw_event &ev) const noexcept
  {
    tw_writer *p = w();
    return p ? Error(tw_emit(p, &ev)) : Error();
  }
  Error emit(const tw_event &ev, Args args) const noexcept
  {
    return with_args(w(), args, [&](tw_writer *p, const tw_arg *a,
                                    std::size_t n) {
      tw_event e = ev;
      e.args = a;
      e.nargs = n;
      return tw_emit(p, &e);
    });
  }

protected:
  Emitter() = default;
  ~Emitter() = default;

private:
  tw_writer *w() const noexcept
  {
    return static_cast<const D *>(this)->get();
  }
};

} // namespace detail

/* ------------------------------------------------------------------------
 * Writers
 */

/* A non-owning handle on a tw_writer: copyable, never closes anything.
 * It has every event function (see detail::Emitter above).  tw::global()
 * returns one; a tw::Writer converts to one; a tw_writer * converts to one
 * (NULL: a disabled writer).  The writer must outlive the handle. */
class WriterRef : public detail::Emitter<WriterRef> {
public:
  constexpr WriterRef() noexcept : w_(nullptr) {}
  constexpr WriterRef(tw_writer *w) noexcept : w_(w) {}

  constexpr tw_writer *get() const noexcept { return w_; }
  constexpr explicit operator bool() const noexcept { return w_ != nullptr; }

private:
  tw_writer *w_;
};

/* Options for opening a writer: a tw_options filled by tw_options_init,
 * whose fields can be set by name, plus parse() for an options string.
 * Pass it wherever a const tw_options & is taken. */
struct Options : tw_options {
  Options() noexcept : tw_options() { (void)tw_options_init(this); }

  /* tw_options_parse: apply an options string ("mmap,flush=100ms").  On
   * error returns TW_EOPTION, leaves the options unchanged and, if status
   * is not NULL, fills it with the code and the parser's message. */
  Error parse(CStr str, Status *status = nullptr) noexcept
  {
    int rc = tw_options_parse(this, str.c_str(),
                              status ? status->detail_ : nullptr,
                              status ? Status::detail_capacity : 0);
    if (status)
      status->code_ = rc;   /* the parser wrote the message, or "" */
    return Error(rc);
  }
};

/* The options of tw::Writer's open functions: a tw_options (or
 * tw::Options), or an options string (const char *, std::string; NULL or
 * "" for the defaults), parsed at open.  Converts from each; a temporary
 * that holds pointers only. */
class OpenOptions {
public:
  constexpr OpenOptions() noexcept : opts_(nullptr), str_(nullptr) {}
  constexpr OpenOptions(const tw_options &opts) noexcept
    : opts_(&opts), str_(nullptr) {}
  constexpr OpenOptions(std::nullptr_t) noexcept
    : opts_(nullptr), str_(nullptr) {}
  constexpr OpenOptions(const char *str) noexcept
    : opts_(nullptr), str_(str) {}
  OpenOptions(const std::string &str) noexcept
    : opts_(nullptr), str_(str.c_str()) {}

private:
  friend class Writer;
  const tw_options *opts_;   /* the options, or NULL: parse str_ */
  const char *str_;
};

/* The owner of a tw_writer: move-only, like std::unique_ptr.  Null (a
 * disabled writer: every call does nothing) when default-constructed, when
 * opening failed, after close() or release(), and after being moved from.
 * It has every event function (see detail::Emitter above).
 *
 * The destructor closes the writer (tw_close: commit, close, free) and
 * ignores the error, since a destructor cannot report it: call close()
 * first when the result of the last commit matters. */
class Writer : public detail::Emitter<Writer> {
public:
  constexpr Writer() noexcept : w_(nullptr) {}
  /* Adopt a writer from tw_open* (NULL is fine). */
  constexpr explicit Writer(tw_writer *w) noexcept : w_(w) {}
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;
  Writer(Writer &&other) noexcept : w_(other.release()) {}
  /* Closes the writer held before (ignoring its error), then takes
   * other's; other is left null. */
  Writer &operator=(Writer &&other) noexcept
  {
    if (this != &other) {
      tw_writer *w = other.release();
      (void)close();
      w_ = w;
    }
    return *this;
  }
  ~Writer()
  {
    if (w_)
      (void)tw_close(w_);
  }

  /* tw_open on path.  options: a tw_options (or tw::Options), or an
   * options string parsed with tw_options_parse (NULL or "": the
   * defaults).  Returns the writer, or a null one with *status (if status
   * is not NULL) set to why: TW_EOPTION with the parser's message for a
   * bad options string (the file is then not touched), or tw_open's
   * error.  On success *status is set to 0. */
  [[nodiscard]] static Writer open(CStr path, OpenOptions options = {},
                                   Status *status = nullptr) noexcept
  {
    return opened(options, status, [&](const tw_options *o, int *err) {
      return tw_open(path.c_str(), o, err);
    });
  }
  [[nodiscard]] static Writer open(CStr path, Status *status) noexcept
  {
    return open(path, OpenOptions(), status);
  }

  /* tw_open_fd, likewise: the descriptor stays the caller's (never
   * closed). */
  [[nodiscard]] static Writer open_fd(int fd, OpenOptions options = {},
                                      Status *status = nullptr) noexcept
  {
    return opened(options, status, [&](const tw_options *o, int *err) {
      return tw_open_fd(fd, o, err);
    });
  }
  [[nodiscard]] static Writer open_fd(int fd, Status *status) noexcept
  {
    return open_fd(fd, OpenOptions(), status);
  }

  /* tw_open_stream, likewise: the stream stays the caller's (flushed at
   * close, never closed); always streamed, valid after close() only. */
  [[nodiscard]] static Writer open_stream(std::FILE *stream,
                                          OpenOptions options = {},
                                          Status *status = nullptr) noexcept
  {
    return opened(options, status, [&](const tw_options *o, int *err) {
      return tw_open_stream(stream, o, err);
    });
  }
  [[nodiscard]] static Writer open_stream(std::FILE *stream,
                                          Status *status) noexcept
  {
    return open_stream(stream, OpenOptions(), status);
  }

  /* tw_close: commit, close and free; the Writer is null afterwards.
   * Returns the first error the writer met (0 for a null Writer). */
  Error close() noexcept
  {
    tw_writer *w = release();
    return w ? Error(tw_close(w)) : Error();
  }

  /* The C writer, still owned by this Writer. */
  constexpr tw_writer *get() const noexcept { return w_; }
  /* Give up ownership: returns the C writer (the caller closes it with
   * tw_close) and leaves this Writer null. */
  [[nodiscard]] tw_writer *release() noexcept
  {
    tw_writer *w = w_;
    w_ = nullptr;
    return w;
  }
  constexpr explicit operator bool() const noexcept { return w_ != nullptr; }

  /* A non-owning handle; not from a temporary Writer, which would close
   * its writer at the end of the expression. */
  WriterRef ref() const & noexcept { return WriterRef(w_); }
  WriterRef ref() const && = delete;
  operator WriterRef() const & noexcept { return WriterRef(w_); }
  operator WriterRef() const && = delete;

private:
  /* Opens with open(opts, &error) once the options are known. */
  template <class Open>
  static Writer opened(const OpenOptions &options, Status *status,
                       Open open) noexcept
  {
    Options parsed;
    const tw_options *o = options.opts_;
    if (!o) {
      if (parsed.parse(options.str_, status))
        return Writer();
      o = &parsed;
    }
    tw_writer *w = open(o, status ? &status->code_ : nullptr);
    if (status)
      status->set(w ? 0 : status->code_);
    return Writer(w);
  }

  tw_writer *w_;
};

/* The process-wide writer of tw_global() (TRACEWRITER_OUT,
 * TRACEWRITER_OPTIONS), as a non-owning handle: null when tracing is off.
 * It is committed at exit and never closed; nothing here closes it. */
inline WriterRef global() noexcept { return WriterRef(tw_global()); }

/* tw_global_status: why global() is null (0 when tracing is simply off),
 * with tw_global_status's message. */
inline Status global_status() noexcept
{
  const char *msg = nullptr;
  Status s;
  int rc = tw_global_status(&msg);
  s.set(rc, msg);
  return s;
}

/* tw_now_ns: nanoseconds of CLOCK_MONOTONIC, the scale of every time. */
inline std::uint64_t now_ns() noexcept { return tw_now_ns(); }

/* tw_version: the version of the library linked, "MAJOR.MINOR.PATCH". */
inline const char *version() noexcept { return tw_version(); }

/* ------------------------------------------------------------------------
 * Scoped spans
 */

/* One complete ('X') event from construction to the end of the scope (or
 * to end()), on the calling thread, with arguments:
 *
 *   void handle(tw::WriterRef w, const Request &req) {
 *     tw::Span s(w, "http", "handle", {{"path", req.path}, {"bytes", n}});
 *     ...
 *   }
 *
 * The Span copies everything it is given -- cat, name, argument names,
 * string and JSON values -- when it is constructed, so nothing passed to
 * the constructor needs to outlive that line: a std::string_view into a
 * buffer reused later, a temporary std::string, c_str() of a local all
 * are safe.  The copies go to a fixed buffer inside the Span (up to
 * inline_args arguments and inline_text bytes of text, NULs included);
 * a larger span allocates one block with new (std::nothrow) and, if that
 * fails, writes nothing and end() returns -ENOMEM.  The writer is not
 * copied: it must stay open until the span ends (declare the Writer
 * before the Span).
 *
 * On a null writer the Span is inert: it copies nothing, reads no clock
 * and writes nothing.  The time is read at the end of the constructor, so
 * the copies are not part of the span.  A Span can be neither copied nor
 * moved (a function may still return one: C++17 elides the copy). */
class Span {
public:
  static constexpr std::size_t inline_args = 8;
  static constexpr std::size_t inline_text = 256;

  Span(WriterRef w, CStr cat, CStr name, Args args = {}) noexcept
    : w_(w.get()), start_(0), cat_(nullptr), name_(nullptr),
      args_(inline_args_), nargs_(0), heap_(nullptr), error_(0)
  {
    if (!w_)
      return;
    copy(cat.c_str(), name.c_str(), args);
    start_ = tw_now_ns();
  }
  Span(const Span &) = delete;
  Span &operator=(const Span &) = delete;
  ~Span() { (void)end(); }

  /* Write the event now, ending the span early; later calls (and the
   * destructor) do nothing.  Returns what tw_complete returns, -ENOMEM
   * (see above), or 0 for an inert or ended span. */
  Error end() noexcept
  {
    tw_writer *w = w_;
    int rc;
    if (!w)
      return Error();
    w_ = nullptr;
    rc = error_ ? error_
                : tw_complete(w, cat_, name_, start_, tw_now_ns() - start_,
                              args_, nargs_);
    ::operator delete(heap_);
    heap_ = nullptr;
    return Error(rc);
  }

  /* True until the span has ended (false for an inert span). */
  constexpr bool active() const noexcept { return w_ != nullptr; }
  constexpr explicit operator bool() const noexcept { return w_ != nullptr; }
  /* The start time, ns of tw::now_ns() (0 for an inert span). */
  constexpr std::uint64_t start_ns() const noexcept { return start_; }

private:
  static bool has_text(const tw_arg &a) noexcept
  {
    return (a.type == TW_ARG_STRING || a.type == TW_ARG_JSON) && a.v.s;
  }

  /* Copies n bytes of s to at if they fit before end, and points s to the
   * copy (NULL stays NULL).  Returns false if they do not fit. */
  static bool put(char *&at, const char *end, const char *&s,
                  std::size_t n) noexcept
  {
    if (!s)
      return true;
    if (n > static_cast<std::size_t>(end - at))
      return false;
    std::memcpy(at, s, n);
    s = at;
    at += n;
    return true;
  }
  static bool put_cstr(char *&at, const char *end, const char *&s) noexcept
  {
    return !s || put(at, end, s, std::strlen(s) + 1);
  }

  /* Copies cat, name and the arguments to out[] and the text to
   * [at, end), each string measured once.  Returns false if the text
   * does not fit. */
  bool fill(const char *cat, const char *name, Args args, tw_arg *out,
            char *at, const char *end) noexcept
  {
    std::size_t i = 0;
    if (!put_cstr(at, end, cat) || !put_cstr(at, end, name))
      return false;
    for (const Arg &a : args) {
      tw_arg c = a.c_arg();
      if (!put_cstr(at, end, c.name))
        return false;
      if (has_text(c)) {
        if (c.len == nul_terminated)
          c.len = std::strlen(c.v.s);
        if (!put(at, end, c.v.s, c.len))
          return false;
      }
      new (static_cast<void *>(out + i++)) tw_arg(c);
    }
    cat_ = cat;
    name_ = name;
    return true;
  }

  /* Into inline_args_ and text_ when it all fits, else into one block. */
  void copy(const char *cat, const char *name, Args args) noexcept
  {
    nargs_ = args.size();
    if (nargs_ <= inline_args &&
        fill(cat, name, args, inline_args_, text_, text_ + inline_text))
      return;
    std::size_t text = (cat ? std::strlen(cat) + 1 : 0) +
                       (name ? std::strlen(name) + 1 : 0);
    for (const Arg &a : args) {
      const tw_arg &c = a.c_arg();
      text += c.name ? std::strlen(c.name) + 1 : 0;
      if (has_text(c))
        text += c.len == nul_terminated ? std::strlen(c.v.s) : c.len;
    }
    std::size_t head = nargs_ * sizeof(tw_arg);
    heap_ = ::operator new(head + text, std::nothrow);
    if (!heap_) {
      error_ = -ENOMEM;
      nargs_ = 0;
      return;
    }
    args_ = static_cast<tw_arg *>(heap_);
    char *at = static_cast<char *>(heap_) + head;
    (void)fill(cat, name, args, args_, at, at + text);   /* it fits */
  }

  tw_writer *w_;           /* NULL: inert or ended */
  std::uint64_t start_;    /* tw_now_ns() at construction */
  const char *cat_;        /* copies, in text_ or heap_ */
  const char *name_;
  tw_arg *args_;           /* inline_args_ or the start of heap_ */
  std::size_t nargs_;
  void *heap_;             /* the block of a large span, or NULL */
  int error_;              /* -ENOMEM if heap_ could not be had */
  tw_arg inline_args_[inline_args];
  char text_[inline_text];
};

} // namespace tw

#endif /* TRACEWRITER_HPP */
