/* _speedups.c -- the compiled fast path of the Python binding.
 *
 * A CPython extension (the C API alone, no third-party tool) that takes
 * over the two hot paths of tracewriter/__init__.py when it was built:
 *
 *   w.span(name, cat=None, **args) used as `with`: Writer.span is the C
 *     method WriterBase.span, which returns a Span of this module; its
 *     __exit__ calls tw_complete directly.
 *   @w.span(...) on a plain function: Span.__call__ wraps the function in
 *     a Decorated of this module, whose call times it and calls
 *     tw_complete with arguments converted once, at decoration.
 *
 * The library is not linked: tracewriter/_lib.py loads it (ctypes) and
 * bind() receives the address of tw_complete from there, so this module
 * builds with Python's headers and tracewriter.h alone, and loads
 * wherever the package does.  Whatever the fast path does not handle --
 * a closed, disabled or not yet opened (global) writer, an argument that
 * is not an int, float, bool, str or None, a name that is not a str, a
 * coroutine function, async with -- goes to the Python code, which gives
 * the same file and the same errors.  So does a span while a request (an
 * async span) is open anywhere in the process (nesting(True)): the
 * package's _nest_begin tells whether it is inside a request of its
 * writer, where it is written on the request's track; a plain span pays
 * one test of a static int for this.  The calls hold the GIL (the library
 * is fast and thread-safe; releasing the GIL would double the cost).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tracewriter.h"

typedef int (*complete_fn)(tw_writer *, const char *, const char *, uint64_t,
                           uint64_t, const tw_arg *, size_t);

/* Set by bind(). */
static complete_fn tw_complete_p;
static PyObject *error_type;   /* tracewriter.Error */
static PyObject *py_span_type; /* tracewriter.Span (the Python one) */
static PyObject *nest_begin;   /* tracewriter._nest_begin, or NULL */
static PyObject *nest_end;     /* tracewriter._nest_end, or NULL */
/* Set by nesting(): a request is open somewhere in the process. */
static int nesting;

/* Arguments converted at most this many on the stack; more go to Python. */
#define FAST_MAX_ARGS 16

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The UTF-8 of a str with no NUL (cached in the str object), or NULL
 * with no exception set when s is something the fast path leaves to
 * Python. */
static const char *fast_cstr(PyObject *s, Py_ssize_t *len)
{
  Py_ssize_t n;
  const char *c;
  if (!PyUnicode_CheckExact(s))
    return NULL;
  c = PyUnicode_AsUTF8AndSize(s, &n);
  if (!c) {
    PyErr_Clear(); /* lone surrogates: Python's path handles them */
    return NULL;
  }
  if ((size_t)n != strlen(c))
    return NULL;
  if (len)
    *len = n;
  return c;
}

/* One argument into a tw_arg; 0 when its type is left to Python.  The
 * pointers stay valid while key and v live. */
static int fast_arg(tw_arg *a, PyObject *key, PyObject *v)
{
  Py_ssize_t n;
  if (!(a->name = fast_cstr(key, NULL)))
    return 0;
  if (PyUnicode_CheckExact(v)) {
    if (!(a->v.s = PyUnicode_AsUTF8AndSize(v, &n))) {
      PyErr_Clear();
      return 0;
    }
    a->type = TW_ARG_STRING;
    a->len = (size_t)n;
  } else if (PyBool_Check(v)) {
    a->type = TW_ARG_BOOL;
    a->v.b = v == Py_True;
  } else if (PyLong_CheckExact(v)) {
    int overflow;
    long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow)
      return 0; /* uint64 and beyond: Python's rules */
    a->type = TW_ARG_INT;
    a->v.i = i;
  } else if (PyFloat_CheckExact(v)) {
    a->type = TW_ARG_DOUBLE;
    a->v.d = PyFloat_AS_DOUBLE(v);
  } else if (v == Py_None) {
    a->type = TW_ARG_NULL;
  } else {
    return 0;
  }
  return 1;
}

/* A dict of arguments into args[]; the count, or -1 when Python must do
 * it. */
static Py_ssize_t fast_args(PyObject *dict, tw_arg *args)
{
  Py_ssize_t pos = 0, n = 0;
  PyObject *k, *v;
  if (!dict)
    return 0;
  if (PyDict_GET_SIZE(dict) > FAST_MAX_ARGS)
    return -1;
  while (PyDict_Next(dict, &pos, &k, &v))
    if (!fast_arg(&args[n++], k, v))
      return -1;
  return n;
}

/* Raise tracewriter.Error(rc, None, context). */
static void raise_error(int rc, const char *context)
{
  PyObject *e = PyObject_CallFunction(error_type, "iOs", rc, Py_None, context);
  if (e) {
    PyErr_SetObject(error_type, e);
    Py_DECREF(e);
  }
}

/* ------------------------------------------------------------ WriterBase */

/* The base of tracewriter.Writer: its handle slot (_h: an int address, 0
 * when disabled, None once closed) and the C span method. */
typedef struct {
  PyObject_HEAD
  PyObject *h;
} WriterBase;

/* The writer's handle, or NULL when the fast path must not use it. */
static tw_writer *writer_handle(PyObject *w)
{
  PyObject *h = ((WriterBase *)w)->h;
  if (!tw_complete_p || !h || !PyLong_CheckExact(h))
    return NULL;
  return (tw_writer *)PyLong_AsVoidPtr(h);
}

static PyMemberDef writer_members[] = {
  {"_h", T_OBJECT, offsetof(WriterBase, h), 0,
   "the library's handle: an address, 0 when disabled, None once closed"},
  {NULL}};

static void writer_dealloc(WriterBase *self)
{
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->h);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The handle is an int or None: nothing to visit.  (A heap subclass's
 * own traverse visits the type.) */
static int writer_traverse(WriterBase *self, visitproc visit, void *arg)
{
  (void)self, (void)visit, (void)arg;
  return 0;
}

/* ------------------------------------------------------------------ Span */

typedef struct {
  PyObject_HEAD
  PyObject *w;     /* the Writer */
  PyObject *name;  /* str */
  PyObject *cat;   /* str or None */
  PyObject *args;  /* dict or NULL */
  PyObject *aspan; /* the Python Span of an async with, while open */
  PyObject *frame; /* the package's frame of a span inside a request */
  uint64_t t0;
  int open;
} Span;

static PyTypeObject SpanType;

static void span_dealloc(Span *self)
{
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->w);
  Py_CLEAR(self->name);
  Py_CLEAR(self->cat);
  Py_CLEAR(self->args);
  Py_CLEAR(self->aspan);
  Py_CLEAR(self->frame);
  PyObject_GC_Del(self);
}

static int span_traverse(Span *self, visitproc visit, void *arg)
{
  Py_VISIT(self->w);
  Py_VISIT(self->args);
  Py_VISIT(self->aspan);
  Py_VISIT(self->frame);
  return 0;
}

/* The frame of a span starting now inside a request of w (a new
 * reference), None when it is not inside one, NULL with an exception. */
static PyObject *frame_begin(PyObject *w, PyObject *name, PyObject *cat,
                             PyObject *args)
{
  return PyObject_CallFunctionObjArgs(nest_begin, w, name, cat,
                                      args ? args : Py_None, NULL);
}

/* Close and write frame f (stealing the reference): 0, or -1 with an
 * exception. */
static int frame_end(PyObject *f, PyObject *args, int failed)
{
  PyObject *r = PyObject_CallFunctionObjArgs(
    nest_end, f, args ? args : Py_None, failed ? Py_True : Py_False, NULL);
  Py_DECREF(f);
  if (!r)
    return -1;
  Py_DECREF(r);
  return 0;
}

static PyObject *span_enter(Span *self, PyObject *unused)
{
  (void)unused;
  if (nesting && nest_begin && !self->frame) {
    PyObject *f = frame_begin(self->w, self->name, self->cat, self->args);
    if (!f)
      return NULL;
    if (f == Py_None)
      Py_DECREF(f);
    else
      self->frame = f;
  }
  self->t0 = now_ns();
  self->open = 1;
  Py_INCREF(self);
  return (PyObject *)self;
}

/* Write the span's X event: fast when it can, else through the Writer's
 * Python _event.  Returns 0, or -1 with an exception set. */
static int span_write(PyObject *w, PyObject *name, PyObject *cat,
                      PyObject *args, uint64_t t0, uint64_t t1)
{
  tw_writer *h = writer_handle(w);
  const char *cname = fast_cstr(name, NULL);
  const char *ccat = cat == Py_None ? NULL : fast_cstr(cat, NULL);
  tw_arg a[FAST_MAX_ARGS];
  Py_ssize_t n = -1;
  if (h && cname && (ccat || cat == Py_None))
    n = fast_args(args, a);
  if (n >= 0) {
    int rc = tw_complete_p(h, ccat, cname, t0, t1 - t0, a, (size_t)n);
    if (rc) {
      raise_error(rc, "span");
      return -1;
    }
    return 0;
  } else {
    PyObject *r = PyObject_CallMethod(w, "_span_end", "OOOKK", name, cat,
                                      args ? args : Py_None,
                                      (unsigned long long)t0,
                                      (unsigned long long)t1);
    if (!r)
      return -1;
    Py_DECREF(r);
    return 0;
  }
}

static PyObject *span_exit(Span *self, PyObject *const *args, Py_ssize_t n)
{
  uint64_t t1 = now_ns();
  int failed = n > 1 && args[1] != Py_None;
  if (!self->open) {
    PyErr_SetString(PyExc_RuntimeError, "span exited without being entered");
    return NULL;
  }
  self->open = 0;
  if (self->frame) {
    PyObject *f = self->frame;
    self->frame = NULL;
    if (frame_end(f, self->args, failed))
      return NULL;
    Py_RETURN_NONE;
  }
  if (span_write(self->w, self->name, self->cat, self->args, self->t0, t1)) {
    /* The body's exception goes on, not ours (as the Python Span). */
    if (failed && (PyErr_ExceptionMatches(error_type) ||
                   PyErr_ExceptionMatches(PyExc_TypeError) ||
                   PyErr_ExceptionMatches(PyExc_ValueError)))
      PyErr_Clear();
    else
      return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *span_set(Span *self, PyObject *args, PyObject *kwargs)
{
  PyObject *merged;
  if (PyTuple_GET_SIZE(args)) {
    PyErr_SetString(PyExc_TypeError, "set() takes keyword arguments only");
    return NULL;
  }
  merged = self->args ? PyDict_Copy(self->args) : PyDict_New();
  if (!merged)
    return NULL;
  if (kwargs && PyDict_Update(merged, kwargs)) {
    Py_DECREF(merged);
    return NULL;
  }
  Py_XSETREF(self->args, merged);
  Py_RETURN_NONE;
}

/* The Python Span with the same fields (async with, decorators). */
static PyObject *span_as_python(Span *self)
{
  return PyObject_CallFunctionObjArgs(py_span_type, self->w, self->name,
                                      self->cat, self->args ? self->args
                                                            : Py_None,
                                      NULL);
}

static PyObject *span_aenter(Span *self, PyObject *unused)
{
  PyObject *py, *r;
  (void)unused;
  if (self->aspan) {
    PyErr_SetString(PyExc_RuntimeError,
                    "this span is already open: make one per use");
    return NULL;
  }
  if (!(py = span_as_python(self)))
    return NULL;
  r = PyObject_CallMethod(py, "__aenter__", NULL);
  if (r)
    Py_XSETREF(self->aspan, py);
  else
    Py_DECREF(py);
  return r;
}

static PyObject *span_aexit(Span *self, PyObject *args)
{
  PyObject *py = self->aspan, *meth, *r;
  if (!py) {
    PyErr_SetString(PyExc_RuntimeError, "span exited without being entered");
    return NULL;
  }
  self->aspan = NULL;
  meth = PyObject_GetAttrString(py, "__aexit__");
  Py_DECREF(py);
  if (!meth)
    return NULL;
  r = PyObject_Call(meth, args, NULL);
  Py_DECREF(meth);
  return r;
}

static PyObject *span_call(Span *self, PyObject *args, PyObject *kwargs)
{
  PyObject *py = span_as_python(self), *r;
  if (!py)
    return NULL;
  r = PyObject_Call(py, args, kwargs);
  Py_DECREF(py);
  return r;
}

static PyMethodDef span_methods[] = {
  {"__enter__", (PyCFunction)span_enter, METH_NOARGS, NULL},
  {"__exit__", (PyCFunction)(void (*)(void))span_exit, METH_FASTCALL, NULL},
  {"__aenter__", (PyCFunction)span_aenter, METH_NOARGS, NULL},
  {"__aexit__", (PyCFunction)span_aexit, METH_VARARGS, NULL},
  {"set", (PyCFunction)(void (*)(void))span_set, METH_VARARGS | METH_KEYWORDS,
   "Add or replace arguments of the span before it is written."},
  {NULL}};

static PyTypeObject SpanType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "tracewriter._speedups.Span",
  .tp_basicsize = sizeof(Span),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
  .tp_doc = "A span of Writer.span() (the compiled one): one complete "
            "('X') event from __enter__ to __exit__.",
  .tp_dealloc = (destructor)span_dealloc,
  .tp_traverse = (traverseproc)span_traverse,
  .tp_call = (ternaryfunc)span_call,
  .tp_methods = span_methods,
};

/* WriterBase.span(name=None, /, cat=None, args=None, **kwargs) */
static PyObject *writer_span(PyObject *self, PyObject *const *args,
                             size_t nargsf, PyObject *kwnames)
{
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw, i;
  PyObject *name = nargs > 0 ? args[0] : Py_None;
  PyObject *cat = Py_None, *items = NULL;
  Span *s;
  nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  /* The fast case: bound to the library (bind() has run: a writer was
   * opened), a str name, at most cat= positionally after it, and keyword
   * arguments that are not args=. */
  if (!tw_complete_p || nargs > 2 || !PyUnicode_CheckExact(name))
    goto python;
  if (nargs == 2)
    cat = args[1];
  for (i = 0; i < nkw; i++) {
    PyObject *k = PyTuple_GET_ITEM(kwnames, i);
    PyObject *v = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(k, "cat") == 0) {
      if (nargs == 2)
        goto python;
      cat = v;
    } else if (PyUnicode_CompareWithASCIIString(k, "args") == 0 ||
               (PyUnicode_GET_LENGTH(k) == 9 &&
                PyUnicode_CompareWithASCIIString(k, "call_args") == 0)) {
      goto python;
    } else {
      if (!items && !(items = PyDict_New()))
        return NULL;
      if (PyDict_SetItem(items, k, v)) {
        Py_DECREF(items);
        return NULL;
      }
    }
  }
  if (cat != Py_None && !PyUnicode_CheckExact(cat)) {
    Py_XDECREF(items);
    goto python;
  }
  s = PyObject_GC_New(Span, &SpanType);
  if (!s) {
    Py_XDECREF(items);
    return NULL;
  }
  Py_INCREF(self);
  s->w = self;
  Py_INCREF(name);
  s->name = name;
  Py_INCREF(cat);
  s->cat = cat;
  s->args = items;
  s->aspan = NULL;
  s->frame = NULL;
  s->t0 = 0;
  s->open = 0;
  PyObject_GC_Track(s);
  return (PyObject *)s;
python: {
    PyObject *meth = PyObject_GetAttrString(self, "_span_py");
    PyObject *r;
    if (!meth)
      return NULL;
    r = PyObject_Vectorcall(meth, args, nargsf, kwnames);
    Py_DECREF(meth);
    return r;
  }
}

static PyMethodDef writer_methods[] = {
  {"span", (PyCFunction)(void (*)(void))writer_span,
   METH_FASTCALL | METH_KEYWORDS,
   "span(name=None, /, cat=None, args=None, **kwargs): see Writer.span"},
  {NULL}};

static PyTypeObject WriterBaseType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "tracewriter._speedups.WriterBase",
  .tp_basicsize = sizeof(WriterBase),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .tp_doc = "The compiled base of tracewriter.Writer.",
  .tp_dealloc = (destructor)writer_dealloc,
  .tp_traverse = (traverseproc)writer_traverse,
  .tp_members = writer_members,
  .tp_methods = writer_methods,
  .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------- Decorated */

/* A plain function decorated with @w.span: each call is one X event.  The
 * arguments are converted once; their keys and values are held in
 * items. */
typedef struct {
  PyObject_HEAD
  PyObject *w, *name, *cat, *items, *fn, *dict;
  const char *cname, *ccat;
  Py_ssize_t nargs; /* -1: the arguments go through Python at each call */
  tw_arg args[FAST_MAX_ARGS];
  vectorcallfunc vectorcall;
} Decorated;

static PyObject *decorated_vectorcall(PyObject *op, PyObject *const *args,
                                      size_t nargsf, PyObject *kwnames)
{
  Decorated *d = (Decorated *)op;
  uint64_t t0, t1;
  PyObject *r;
  tw_writer *h;
  int rc;
  if (nesting && nest_begin) {
    PyObject *f = frame_begin(d->w, d->name, d->cat, d->items);
    if (!f)
      return NULL;
    if (f != Py_None) {
      r = PyObject_Vectorcall(d->fn, args, nargsf, kwnames);
      if (r) {
        if (frame_end(f, d->items, 0)) {
          Py_DECREF(r);
          return NULL;
        }
      } else {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (frame_end(f, d->items, 1))
          PyErr_Clear();
        PyErr_Restore(type, value, tb);
      }
      return r;
    }
    Py_DECREF(f);
  }
  t0 = now_ns();
  r = PyObject_Vectorcall(d->fn, args, nargsf, kwnames);
  t1 = now_ns();
  h = writer_handle(d->w);
  if (h && d->nargs >= 0) {
    rc = tw_complete_p(h, d->ccat, d->cname, t0, t1 - t0, d->args,
                       (size_t)d->nargs);
    if (rc && r) {
      Py_DECREF(r);
      raise_error(rc, "span");
      return NULL;
    }
    return r;
  }
  if (r) {
    if (span_write(d->w, d->name, d->cat, d->items, t0, t1)) {
      Py_DECREF(r);
      return NULL;
    }
  } else {
    /* The function raised: write the span, keep its exception. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (span_write(d->w, d->name, d->cat, d->items, t0, t1))
      PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
  return r;
}

static PyObject *decorated_new(PyTypeObject *type, PyObject *args,
                               PyObject *kwargs)
{
  PyObject *w, *name, *cat, *items, *fn;
  Decorated *d;
  (void)kwargs;
  if (!PyArg_ParseTuple(args, "OOOOO:Decorated", &w, &name, &cat, &items,
                        &fn))
    return NULL;
  if (!PyObject_TypeCheck(w, &WriterBaseType)) {
    PyErr_SetString(PyExc_TypeError, "Decorated needs a Writer");
    return NULL;
  }
  d = (Decorated *)type->tp_alloc(type, 0);
  if (!d)
    return NULL;
  Py_INCREF(w);
  d->w = w;
  Py_INCREF(name);
  d->name = name;
  Py_INCREF(cat);
  d->cat = cat;
  /* A copy: the caller's dict may change; its strs are held by it. */
  d->items = items == Py_None ? NULL : PyDict_Copy(items);
  if (items != Py_None && !d->items) {
    Py_DECREF(d);
    return NULL;
  }
  Py_INCREF(fn);
  d->fn = fn;
  d->cname = fast_cstr(name, NULL);
  d->ccat = cat == Py_None ? NULL : fast_cstr(cat, NULL);
  d->nargs = -1;
  if (d->cname && (d->ccat || cat == Py_None))
    d->nargs = fast_args(d->items, d->args);
  d->vectorcall = decorated_vectorcall;
  return (PyObject *)d;
}

static void decorated_dealloc(Decorated *d)
{
  PyObject_GC_UnTrack(d);
  Py_CLEAR(d->w);
  Py_CLEAR(d->name);
  Py_CLEAR(d->cat);
  Py_CLEAR(d->items);
  Py_CLEAR(d->fn);
  Py_CLEAR(d->dict);
  Py_TYPE(d)->tp_free((PyObject *)d);
}

static int decorated_traverse(Decorated *d, visitproc visit, void *arg)
{
  Py_VISIT(d->w);
  Py_VISIT(d->items);
  Py_VISIT(d->fn);
  Py_VISIT(d->dict);
  return 0;
}

static int decorated_clear(Decorated *d)
{
  Py_CLEAR(d->fn);
  Py_CLEAR(d->dict);
  return 0;
}

/* As a plain function: bound to an instance when found on a class. */
static PyObject *decorated_get(PyObject *self, PyObject *obj, PyObject *type)
{
  (void)type;
  if (obj == NULL || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

/* Pickled by name, as the function it stands for (functools.wraps gave
 * it __module__ and __qualname__): pickle looks the name up again. */
static PyObject *decorated_reduce(PyObject *self, PyObject *unused)
{
  (void)unused;
  return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef decorated_methods[] = {
  {"__reduce__", decorated_reduce, METH_NOARGS, NULL},
  {NULL}};

static PyGetSetDef decorated_getset[] = {
  {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
  {NULL}};

static PyTypeObject DecoratedType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "tracewriter._speedups.Decorated",
  .tp_basicsize = sizeof(Decorated),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
              Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
  .tp_doc = "A function decorated with @Writer.span (the compiled one).",
  .tp_new = decorated_new,
  .tp_dealloc = (destructor)decorated_dealloc,
  .tp_traverse = (traverseproc)decorated_traverse,
  .tp_clear = (inquiry)decorated_clear,
  .tp_call = PyVectorcall_Call,
  .tp_vectorcall_offset = offsetof(Decorated, vectorcall),
  .tp_dictoffset = offsetof(Decorated, dict),
  .tp_descr_get = decorated_get,
  .tp_getset = decorated_getset,
  .tp_methods = decorated_methods,
};

/* ---------------------------------------------------------------- module */

/* bind(complete_address, Error, Span[, nest_begin, nest_end]): the
 * address of tw_complete in the library _lib.py loaded, and the Python
 * classes and functions this module calls. */
static PyObject *bind(PyObject *mod, PyObject *args)
{
  PyObject *addr, *err, *span, *begin = NULL, *end = NULL;
  void *p;
  (void)mod;
  if (!PyArg_ParseTuple(args, "OOO|OO:bind", &addr, &err, &span, &begin,
                        &end))
    return NULL;
  if ((begin && !PyCallable_Check(begin)) || (end && !PyCallable_Check(end)) ||
      (begin && !end)) {
    PyErr_SetString(PyExc_TypeError, "bind: nest_begin and nest_end must "
                                      "both be callables");
    return NULL;
  }
  p = PyLong_AsVoidPtr(addr);
  if (!p) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "bind: a NULL tw_complete");
    return NULL;
  }
  tw_complete_p = (complete_fn)p;
  Py_INCREF(err);
  Py_XSETREF(error_type, err);
  Py_INCREF(span);
  Py_XSETREF(py_span_type, span);
  if (begin) {
    Py_INCREF(begin);
    Py_XSETREF(nest_begin, begin);
    Py_INCREF(end);
    Py_XSETREF(nest_end, end);
  }
  Py_RETURN_NONE;
}

/* nesting(flag): whether a request is open somewhere in the process, so
 * that spans ask the package whether they are inside one. */
static PyObject *set_nesting(PyObject *mod, PyObject *flag)
{
  int on = PyObject_IsTrue(flag);
  (void)mod;
  if (on < 0)
    return NULL;
  nesting = on;
  Py_RETURN_NONE;
}

static PyObject *bound(PyObject *mod, PyObject *unused)
{
  (void)mod, (void)unused;
  return PyBool_FromLong(tw_complete_p != NULL);
}

static PyMethodDef module_methods[] = {
  {"bind", bind, METH_VARARGS,
   "bind(tw_complete_address, Error, Span): called once by the package."},
  {"bound", bound, METH_NOARGS, "True once bind() has run."},
  {"nesting", set_nesting, METH_O,
   "nesting(flag): a request is open somewhere (called by the package)."},
  {NULL}};

static struct PyModuleDef module = {
  PyModuleDef_HEAD_INIT,
  .m_name = "tracewriter._speedups",
  .m_doc = "The compiled fast path of tracewriter's spans (optional).",
  .m_size = -1,
  .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
  PyObject *m;
  if (PyType_Ready(&WriterBaseType) < 0 || PyType_Ready(&SpanType) < 0 ||
      PyType_Ready(&DecoratedType) < 0)
    return NULL;
  m = PyModule_Create(&module);
  if (!m)
    return NULL;
  if (PyModule_AddObjectRef(m, "WriterBase", (PyObject *)&WriterBaseType) ||
      PyModule_AddObjectRef(m, "Span", (PyObject *)&SpanType) ||
      PyModule_AddObjectRef(m, "Decorated", (PyObject *)&DecoratedType)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
