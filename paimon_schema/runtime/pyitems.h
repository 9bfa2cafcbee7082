/* The items of a Python list or of a numpy array of objects, read in place: shared by
 * `pylists.c` (typing a column's values) and `kernels.c` (hashing a column's strings). */
#ifndef PAIMON_SCHEMA_PYITEMS_H
#define PAIMON_SCHEMA_PYITEMS_H

#include <Python.h>
#include <string.h>

/* The items of a long list lie anywhere in memory (a list built over a heap of freed objects
 * points all over it), so each loop asks for the object 32 items ahead: 1M shuffled ints are
 * read in 11 ms instead of 20. */
#define AHEAD 32
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(items, row, rows) \
    do { if ((row) + AHEAD < (rows)) __builtin_prefetch((items)[(row) + AHEAD]); } while (0)
/* the same over a block's present rows (`present_rows`): item rows[j + AHEAD] */
#define PREFETCH_AT(items, rows, j, n) \
    do { if ((j) + AHEAD < (n)) __builtin_prefetch((items)[(rows)[(j) + AHEAD]]); } while (0)
#else
#define PREFETCH(items, row, rows) do { } while (0)
#define PREFETCH_AT(items, rows, j, n) do { } while (0)
#endif

/* The items of a list, or of a one-dimensional C-contiguous numpy array of objects (found
 * through its `__array_interface__`, so that no numpy headers are needed; the caller's
 * reference keeps the array, which cannot be resized while referenced): a borrowed pointer to
 * `count` item pointers. 0 on success, 1 for anything else (declined), -1 on error. */
static int
items_of(PyObject *values, PyObject ***items, Py_ssize_t *count)
{
    if (PyList_Check(values)) {
        *items = ((PyListObject *)values)->ob_item;
        *count = PyList_GET_SIZE(values);
        return 0;
    }
    if (strcmp(Py_TYPE(values)->tp_name, "numpy.ndarray") != 0)
        return 1;
    PyObject *interface = PyObject_GetAttrString(values, "__array_interface__");
    if (interface == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 1;
    }
    int result = 1;
    PyObject *typestr, *shape, *strides, *data;
    if (PyDict_Check(interface)
            && (typestr = PyDict_GetItemString(interface, "typestr")) != NULL
            && PyUnicode_Check(typestr) && PyUnicode_CompareWithASCIIString(typestr, "|O") == 0
            && (shape = PyDict_GetItemString(interface, "shape")) != NULL
            && PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 1
            && ((strides = PyDict_GetItemString(interface, "strides")) == NULL || strides == Py_None)
            && (data = PyDict_GetItemString(interface, "data")) != NULL
            && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2) {
        Py_ssize_t length = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0));
        void *address = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
        if (PyErr_Occurred())
            result = -1;
        else if (length >= 0 && (address != NULL || length == 0)) {
            *items = (PyObject **)address;
            *count = length;
            result = 0;
        }
    }
    Py_DECREF(interface);
    return result;
}

/* Rows per block of `present_rows`: their positions stay in the L1 cache. */
#define ROW_BLOCK 4096

/* The rows in [start, end) (at most ROW_BLOCK) whose item is not None, into `rows`, and a bool
 * byte each into `mask` (if not NULL; indexed by row): with no branch per row, which a column
 * of 90 % NULLs mispredicts at every change, so that the loop over the present items after it
 * prefetches the objects it will read, not the Nones between them. Returns their count. */
static inline Py_ssize_t
present_rows(PyObject *const *items, Py_ssize_t start, Py_ssize_t end, char *mask, Py_ssize_t *rows)
{
    Py_ssize_t n = 0;
    if (mask != NULL) {
        for (Py_ssize_t row = start; row < end; row++) {
            char present = items[row] != Py_None;
            mask[row] = present;
            rows[n] = row;
            n += present;
        }
        return n;
    }
    for (Py_ssize_t row = start; row < end; row++) {
        rows[n] = row;
        n += items[row] != Py_None;
    }
    return n;
}

#endif
