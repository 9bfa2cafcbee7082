/* The items of a Python list or of a numpy array of objects, read in place, and an exact int's
 * int64: shared by `pylists.c` (typing a column's values) and `kernels.c` (hashing a column's
 * values into a bloom filter). */
#ifndef PAIMON_SCHEMA_PYITEMS_H
#define PAIMON_SCHEMA_PYITEMS_H

#include <Python.h>
#include <stdint.h>
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

/* An exact int as int64: 1, or 0 when it lies outside int64. Up to Python 3.11 an int is its
 * sign-and-size and 30-bit digits (`longintrepr.h`), read here directly, by digit count (a
 * loop over the digits mispredicts): the API call costs twice the rest of the pass for a
 * million 64-bit values. The sign is applied without a branch: a column whose values change
 * sign at random (keys around zero) mispredicted one row in two, which took 4x the pass (12
 * against 3 ms a million rows). Other layouts go through the API. */
static inline int
exact_int64(PyObject *item, int64_t *out)
{
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    Py_ssize_t size = Py_SIZE(item);
    uint64_t negative = (uint64_t)0 - (uint64_t)(size < 0);        /* all ones if negative */
    const digit *digits = ((PyLongObject *)item)->ob_digit;
    uint64_t magnitude;
    switch ((size_t)((uint64_t)size ^ negative) - (size_t)negative) {     /* |size| */
    case 0:
        magnitude = 0;
        break;
    case 1:
        magnitude = digits[0];
        break;
    case 2:
        magnitude = ((uint64_t)digits[1] << 30) | digits[0];
        break;
    case 3:
        if (digits[2] >> 4)             /* 2**64 or more */
            return 0;
        magnitude = ((uint64_t)digits[2] << 60) | ((uint64_t)digits[1] << 30) | digits[0];
        break;
    default:
        return 0;
    }
    if (magnitude > (uint64_t)INT64_MAX + (negative & 1))
        return 0;
    uint64_t bits = (magnitude ^ negative) - negative;      /* two's complement, no signed overflow */
    memcpy(out, &bits, 8);
    return 1;
#else
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
    *out = (int64_t)value;
    return !overflow;
#endif
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
