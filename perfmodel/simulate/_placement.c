/* The replay's task placement loop in C: `perfmodel.simulate.scheduler._place`, exactly.
 *
 * Why C: a catalog search replays a 230k-task log dozens of times, and the placement loop
 * (one heap replacement per task) is nearly all of a replay's time; in Python it costs
 * ~0.25 us a task, here ~0.01 us. The numbers are the same: each step takes the smallest
 * slot free time, adds the task's duration in one IEEE double addition, as Python does,
 * and the heap holds plain values, so which of two equal values is taken cannot matter.
 * The pure-Python loop stays as the fallback (and as the reference the tests compare with).
 *
 * place(heap, durations, i, r, limit, mx) -> (i, mx)
 *   heap: writable contiguous doubles, a binary min-heap of slot free times (changed in
 *   place); durations: contiguous doubles. Tasks durations[i:] take the earliest free slot
 *   (never before r) until a task would start after limit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Replace the root by v, as Python's heapq does: move the smaller child up all the way to
 * a leaf, then bubble v up from there. A new free time is usually among the largest, so
 * the bubbling is short, and the way down picks the child without a branch to mispredict
 * (about half the time of a plain sift-down). */
static void replace_root(double *h, Py_ssize_t n, double v)
{
    Py_ssize_t pos = 0;
    Py_ssize_t child = 1;
    while (child + 1 < n) {
        child += h[child + 1] < h[child];
        h[pos] = h[child];
        pos = child;
        child = 2 * pos + 1;
    }
    if (child < n) {
        h[pos] = h[child];
        pos = child;
    }
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) >> 1;
        if (!(v < h[parent]))
            break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = v;
}

static PyObject *place(PyObject *self, PyObject *args)
{
    Py_buffer heap_buf, dur_buf;
    Py_ssize_t i;
    double r, limit, mx;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*nddd", &heap_buf, &dur_buf, &i, &r, &limit, &mx))
        return NULL;
    if (heap_buf.itemsize != (Py_ssize_t)sizeof(double) ||
        dur_buf.itemsize != (Py_ssize_t)sizeof(double)) {
        PyBuffer_Release(&heap_buf);
        PyBuffer_Release(&dur_buf);
        PyErr_SetString(PyExc_TypeError, "place: buffers must hold doubles");
        return NULL;
    }
    double *h = (double *)heap_buf.buf;
    const double *d = (const double *)dur_buf.buf;
    Py_ssize_t k = heap_buf.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t n = dur_buf.len / (Py_ssize_t)sizeof(double);
    if (k > 0 && i >= 0) {
        Py_BEGIN_ALLOW_THREADS
        while (i < n) {
            double st = h[0];
            if (st < r)
                st = r;
            if (st > limit)
                break;
            double f = st + d[i];
            replace_root(h, k, f);
            if (f > mx)
                mx = f;
            i++;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&heap_buf);
    PyBuffer_Release(&dur_buf);
    return Py_BuildValue("nd", i, mx);
}

static PyMethodDef methods[] = {
    {"place", place, METH_VARARGS,
     "place(heap, durations, i, r, limit, mx) -> (i, mx): the replay's placement loop."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_placement",
    "The replay's task placement loop in C (see perfmodel.simulate.scheduler).", -1, methods,
};

PyMODINIT_FUNC PyInit__placement(void) { return PyModule_Create(&module); }
