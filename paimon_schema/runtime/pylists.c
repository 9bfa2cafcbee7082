/* Python lists typed in one pass, for `layouts/column_values.py`.
 *
 * A million Python ints cost numpy's `fromiter` 17 ms and pyarrow's `array` 35 ms (and neither
 * refuses a float or a bool in an integer column), about Java's whole bloom-filter build; a
 * list of dates or datetimes went value by value through Python (1.3 s for 200k). This
 * walks the list once in C: it checks each item's exact type (no subclasses, so `bool` never
 * passes for an int and no user `__index__`/`__hash__`/`__eq__` runs), converts it (ints,
 * floats and booleans as they are, dates, times and naive datetimes from their fields) and
 * writes it to a fresh buffer; NULL is None. It declines (returns None) at the first item it
 * cannot type exactly, and the caller falls back to the pure-Python path, which accepts or
 * refuses every value by name. No Python code runs inside a loop, so the list cannot change
 * under it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pyitems.h"


/* Days from 1970-01-01 to a proleptic Gregorian date (Python's `toordinal() - 719163`). */
static int64_t
epoch_days(int year, int month, int day)
{
    static const int before_month[] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t y = year - 1;
    int leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return y * 365 + y / 4 - y / 100 + y / 400 + before_month[month] + (month > 2 && leap) + day
        - 719163;
}

/* The last date a column's datetimes were on (their year, month and day bytes, as packed in
 * the object) and its epoch days: the timestamps of a column mostly share their day with the
 * row before, so most rows skip the calendar arithmetic. */
typedef struct {
    uint32_t date;      /* 0: none yet (no date has year 0) */
    int64_t days;
} day_cache_t;

/* A naive datetime, read as UTC, as epoch microseconds: 1, or 0 for anything else. */
static inline int
exact_datetime(PyObject *item, day_cache_t *cache, int64_t *out)
{
    if (!PyDateTime_CheckExact(item) || PyDateTime_DATE_GET_TZINFO(item) != Py_None)
        return 0;
    const unsigned char *data = ((PyDateTime_DateTime *)item)->data;
    uint32_t date;
    memcpy(&date, data, 4);
    if (date != cache->date) {
        cache->date = date;
        cache->days = epoch_days(PyDateTime_GET_YEAR(item), PyDateTime_GET_MONTH(item), PyDateTime_GET_DAY(item));
    }
    *out = ((cache->days * 24 + PyDateTime_DATE_GET_HOUR(item)) * 60 + PyDateTime_DATE_GET_MINUTE(item)) * 60
        * 1000000 + (int64_t)PyDateTime_DATE_GET_SECOND(item) * 1000000 + PyDateTime_DATE_GET_MICROSECOND(item);
    return 1;
}

/* A temporal item as the int64 the kind wants, from the object's fields: 1, or 0 when it is
 * not exactly that kind's type ('D': a date as epoch days; 'T': a time (any zone: Paimon's
 * TIME has none) as the millisecond of the day; 'S': a naive datetime, read as UTC, as epoch
 * microseconds: an aware one is declined, and the reference pass converts it). */
static inline int
exact_temporal(PyObject *item, int kind, day_cache_t *cache, int64_t *out)
{
    if (kind == 'D') {
        if (!PyDate_CheckExact(item))
            return 0;
        *out = epoch_days(PyDateTime_GET_YEAR(item), PyDateTime_GET_MONTH(item), PyDateTime_GET_DAY(item));
        return 1;
    }
    if (kind == 'T') {
        if (!PyTime_CheckExact(item))
            return 0;
        *out = ((int64_t)PyDateTime_TIME_GET_HOUR(item) * 3600 + PyDateTime_TIME_GET_MINUTE(item) * 60
                + PyDateTime_TIME_GET_SECOND(item)) * 1000 + PyDateTime_TIME_GET_MICROSECOND(item) / 1000;
        return 1;
    }
    return exact_datetime(item, cache, out);
}

/* The items of `values` (see `items_of`) and a fresh buffer of `width` bytes per row: 0, or 1
 * when `values` is declined, or -1 on error. */
static int
items_and_buffer(PyObject *values, Py_ssize_t width, PyObject ***items, Py_ssize_t *rows,
                 PyObject **buffer)
{
    int found = items_of(values, items, rows);
    if (found != 0)
        return found;
    if (*rows > PY_SSIZE_T_MAX / 8) {
        PyErr_NoMemory();
        return -1;
    }
    *buffer = PyByteArray_FromStringAndSize(NULL, *rows * width);
    return *buffer == NULL ? -1 : 0;
}

/* One non-NULL item of kind `kind` into out (at *count, which it advances), keeping the least
 * and greatest value: 1, or 0 when it is not exactly of the kind's types (declined). */
static inline int
typed_item(PyObject *item, int kind, char *out, Py_ssize_t *count, int64_t *low, int64_t *high,
           day_cache_t *cache)
{
    if (item == NULL)
        return 0;
    if (kind == 'b') {
        if (item != Py_True && item != Py_False)
            return 0;
        out[(*count)++] = item == Py_True;
        return 1;
    }
    if (kind == 'D' || kind == 'T' || kind == 'S') {
        int64_t moment;
        if (!exact_temporal(item, kind, cache, &moment))
            return 0;
        memcpy(out + 8 * (*count)++, &moment, 8);
        *low = moment < *low ? moment : *low;
        *high = moment > *high ? moment : *high;
        return 1;
    }
    int64_t integer = 0;
    if (PyLong_CheckExact(item)) {
        if (!exact_int64(item, &integer))
            return 0;
    }
    else if (kind == 'i' || !PyFloat_CheckExact(item))
        return 0;
    if (kind == 'i') {
        memcpy(out + 8 * (*count)++, &integer, 8);
        *low = integer < *low ? integer : *low;
        *high = integer > *high ? integer : *high;
    }
    else {
        double value = PyLong_CheckExact(item) ? (double)integer : PyFloat_AS_DOUBLE(item);
        memcpy(out + 8 * (*count)++, &value, 8);
    }
    return 1;
}

PyDoc_STRVAR(numbers_doc,
"numbers(values: list | numpy object array, kind: str)\n"
"    -> tuple[bytearray, bytearray | None, int | None, int | None] | None\n\n"
"The non-NULL items of `values` as native int64 ('i': exact ints within int64; 'D': dates as\n"
"epoch days; 'T': times as the millisecond of the day; 'S': naive datetimes as epoch\n"
"microseconds), float64 ('f': exact floats, and exact ints within int64 as the nearest\n"
"double) or bool bytes ('b': True/False), a bool byte per row (None: no NULL), and the least\n"
"and greatest value of an integer kind (else None, None); None where an item is none of these\n"
"or `values` is neither a list nor a one-dimensional contiguous array of objects.");

static PyObject *
numbers(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *values, *data, *valid = NULL, **items;
    Py_ssize_t rows, count = 0;
    int kind;
    if (!PyArg_ParseTuple(args, "OC:numbers", &values, &kind))
        return NULL;
    if (strchr("ifbDTS", kind) == NULL || kind == 0) {
        PyErr_Format(PyExc_ValueError, "kind must be one of 'i', 'f', 'b', 'D', 'T', 'S', not %c", kind);
        return NULL;
    }
    Py_ssize_t width = kind == 'b' ? 1 : 8;
    int found = items_and_buffer(values, width, &items, &rows, &data);
    if (found != 0)
        return found < 0 ? NULL : Py_NewRef(Py_None);
    char *out = PyByteArray_AS_STRING(data), *mask = NULL;

    /* the common column, no NULL yet: a tight loop while the items are of the kind's own type;
     * integer kinds keep their least and greatest value (the caller's range check) */
    Py_ssize_t row = 0;
    int64_t low = INT64_MAX, high = INT64_MIN;
    day_cache_t cache = {0, 0};
    if (kind == 'S') {
        for (; row < rows; row++) {
            PyObject *item = items[row];
            PREFETCH(items, row, rows);
            if (item == NULL || !exact_datetime(item, &cache, (int64_t *)out + row))
                break;
            int64_t value = ((int64_t *)out)[row];
            low = value < low ? value : low;
            high = value > high ? value : high;
        }
    }
    else if (kind == 'i') {
        for (; row < rows; row++) {
            PyObject *item = items[row];
            PREFETCH(items, row, rows);
            if (item == NULL || !PyLong_CheckExact(item) || !exact_int64(item, (int64_t *)out + row))
                break;
            int64_t value = ((int64_t *)out)[row];
            low = value < low ? value : low;
            high = value > high ? value : high;
        }
    }
    else if (kind == 'f') {
        for (; row < rows; row++) {
            PyObject *item = items[row];
            PREFETCH(items, row, rows);
            if (item == NULL || !PyFloat_CheckExact(item))
                break;
            double value = PyFloat_AS_DOUBLE(item);
            memcpy(out + 8 * row, &value, 8);
        }
    }
    count = row;
    for (; row < rows && items[row] != Py_None; row++) {
        PREFETCH(items, row, rows);
        if (!typed_item(items[row], kind, out, &count, &low, &high, &cache))
            goto decline;
    }
    if (row < rows) {
        /* a NULL: from here a block at a time, the validity of each row (no branch each), then
         * the present items only, each prefetched AHEAD present items before it is read */
        valid = PyByteArray_FromStringAndSize(NULL, rows);
        if (valid == NULL)
            goto fail;
        mask = PyByteArray_AS_STRING(valid);
        memset(mask, 1, (size_t)row);
        Py_ssize_t present[ROW_BLOCK];
        for (Py_ssize_t start = row; start < rows; start += ROW_BLOCK) {
            Py_ssize_t end = rows - start < ROW_BLOCK ? rows : start + ROW_BLOCK;
            Py_ssize_t n = present_rows(items, start, end, mask, present);
            if (kind == 'S') {          /* the datetimes' own loop, as without NULLs */
                for (Py_ssize_t j = 0; j < n; j++, count++) {
                    PREFETCH_AT(items, present, j, n);
                    PyObject *item = items[present[j]];
                    if (item == NULL || !exact_datetime(item, &cache, (int64_t *)out + count))
                        goto decline;
                    int64_t value = ((int64_t *)out)[count];
                    low = value < low ? value : low;
                    high = value > high ? value : high;
                }
                continue;
            }
            for (Py_ssize_t j = 0; j < n; j++) {
                PREFETCH_AT(items, present, j, n);
                if (!typed_item(items[present[j]], kind, out, &count, &low, &high, &cache))
                    goto decline;
            }
        }
    }
    if (PyByteArray_Resize(data, count * width) < 0)
        goto fail;
    if (count == 0 || kind == 'f' || kind == 'b')
        return Py_BuildValue("(NNOO)", data, valid != NULL ? valid : Py_NewRef(Py_None), Py_None, Py_None);
    return Py_BuildValue("(NNLL)", data, valid != NULL ? valid : Py_NewRef(Py_None),
                         (long long)low, (long long)high);

decline:
    Py_DECREF(data);
    Py_XDECREF(valid);
    Py_RETURN_NONE;
fail:
    Py_DECREF(data);
    Py_XDECREF(valid);
    return NULL;
}

/* The distinct strings (or bytes) met so far: an open-addressing table of slots (hash, code,
 * size, kind, offset) and the keys' bytes back to back in one arena. A million rows probe these
 * few hundred kilobytes, which stay in the cache beside the rows streaming by; a dict of the keys
 * also touches each key object and a boxed code, scattered through the heap (a third more
 * time for 1M strings of 10k distinct values). A str is compared in its canonical PEP 393
 * form (the narrowest kind that holds it), so equal strings have equal kind and bytes. */
typedef struct {
    Py_hash_t hash;
    Py_ssize_t code;                /* -1: empty */
    size_t start;                   /* where its bytes start in the arena */
    size_t shape;                   /* its bytes << 3 | its PEP 393 kind (0 for bytes) */
} slot_t;

/* A slot holds all a probe compares (hash, size, kind, where the bytes are): a probe of a
 * known key touches its slot and its bytes, two cache lines, not five arrays. */
typedef struct {
    slot_t *slots;
    size_t mask;
    char *arena;                    /* every key's bytes, back to back */
    size_t used, capacity;
    Py_ssize_t count;
} table_t;

typedef struct {
    const char *data;
    Py_ssize_t size;
    int kind;
} view_t;

static int
view_of(PyObject *item, int text, view_t *view)
{
    if (!text) {
        view->data = PyBytes_AS_STRING(item);
        view->size = PyBytes_GET_SIZE(item);
        view->kind = 0;
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(item) < 0)
        return -1;
#endif
    view->kind = PyUnicode_KIND(item);
    view->size = PyUnicode_GET_LENGTH(item) * view->kind;
    view->data = PyUnicode_DATA(item);
    return 0;
}

static void
table_free(table_t *table)
{
    PyMem_Free(table->slots);
    PyMem_Free(table->arena);
}

static int
table_resize(table_t *table, size_t slots)
{
    slot_t *fresh = PyMem_Malloc(slots * sizeof(slot_t));
    if (fresh == NULL)
        return -1;
    for (size_t i = 0; i < slots; i++)
        fresh[i].code = -1;
    if (table->slots != NULL) {
        for (size_t i = 0; i <= table->mask; i++) {
            if (table->slots[i].code < 0)
                continue;
            size_t at = (size_t)table->slots[i].hash & (slots - 1);
            while (fresh[at].code >= 0)
                at = (at + 1) & (slots - 1);
            fresh[at] = table->slots[i];
        }
        PyMem_Free(table->slots);
    }
    table->slots = fresh;
    table->mask = slots - 1;
    return 0;
}

/* The code of `view` (hash `hash`), adding it as code `count` if new (*added = 1). */
static Py_ssize_t
table_code(table_t *table, const view_t *view, Py_hash_t hash, int *added)
{
    size_t at = (size_t)hash & table->mask, shape = (size_t)view->size << 3 | (size_t)view->kind;
    for (;;) {
        slot_t *slot = &table->slots[at];
        if (slot->code < 0)
            break;
        if (slot->hash == hash && slot->shape == shape
                && (view->size == 0 || memcmp(table->arena + slot->start, view->data, (size_t)view->size) == 0)) {
            *added = 0;
            return slot->code;
        }
        at = (at + 1) & table->mask;
    }
    Py_ssize_t code = table->count;
    if ((size_t)view->size > table->capacity - table->used) {
        size_t capacity = table->capacity ? table->capacity : 16384;
        while ((size_t)view->size > capacity - table->used) {
            if (capacity > PY_SSIZE_T_MAX / 2)
                return -1;
            capacity *= 2;
        }
        char *arena = PyMem_Realloc(table->arena, capacity);
        if (arena == NULL)
            return -1;
        table->arena = arena;
        table->capacity = capacity;
    }
    if (view->size > 0)
        memcpy(table->arena + table->used, view->data, (size_t)view->size);
    table->slots[at].hash = hash;
    table->slots[at].code = code;
    table->slots[at].start = table->used;
    table->slots[at].shape = shape;
    table->used += (size_t)view->size;
    table->count++;
    *added = 1;
    if ((size_t)table->count * 2 > table->mask + 1 && table_resize(table, (table->mask + 1) * 2) < 0)
        return -1;
    return code;
}

PyDoc_STRVAR(codes_doc,
"codes(values: list | numpy object array, text: bool, nan_is_null: bool)\n"
"    -> tuple[bytearray, bytearray | None, list] | None\n\n"
"The non-NULL items' codes (native int64), numbering the distinct items in order of first\n"
"occurrence, a bool byte per row (None: no NULL; NULL is None, and a float NaN if\n"
"`nan_is_null`), and the distinct items; None where an item is not exactly a str (`text`) or\n"
"bytes, or `values` is neither a list nor a one-dimensional contiguous array of objects.");

/* One item's code into out[*count] (which it advances): 1; 0 when it is declined; 2 when it
 * is a NaN taken for NULL; -1 on error. */
static inline int
coded_item(PyObject *item, int text, int nan_is_null, table_t *table, PyObject *distinct,
           int64_t *out, Py_ssize_t *count)
{
    if (item == NULL)
        return 0;
    if (text ? !PyUnicode_CheckExact(item) : !PyBytes_CheckExact(item))
        return nan_is_null && PyFloat_CheckExact(item) && isnan(PyFloat_AS_DOUBLE(item)) ? 2 : 0;
    /* exact str/bytes: hashing them runs no Python code */
    view_t view;
    Py_hash_t hash = PyObject_Hash(item);
    int added;
    if (hash == -1 || view_of(item, text, &view) < 0)
        return -1;
    Py_ssize_t known = table_code(table, &view, hash, &added);
    if (known < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    if (added && PyList_Append(distinct, item) < 0)
        return -1;
    out[(*count)++] = known;
    return 1;
}

static PyObject *
codes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *values, *data, *valid = NULL, *distinct = NULL, **items;
    table_t table = {0};
    Py_ssize_t rows, count = 0, row = 0;
    int text, nan_is_null, typed = 1;
    if (!PyArg_ParseTuple(args, "Opp:codes", &values, &text, &nan_is_null))
        return NULL;
    int found = items_and_buffer(values, 8, &items, &rows, &data);
    if (found != 0)
        return found < 0 ? NULL : Py_NewRef(Py_None);
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(data);
    distinct = PyList_New(0);
    if (distinct == NULL || table_resize(&table, 1024) < 0)
        goto fail;

    /* until the first NULL, every row's code; then, as `numbers` does, a block at a time */
    for (; row < rows && items[row] != Py_None; row++) {
        PREFETCH(items, row, rows);
        typed = coded_item(items[row], text, nan_is_null, &table, distinct, out, &count);
        if (typed != 1)
            break;
    }
    if (typed == 0)
        goto decline;
    if (typed < 0)
        goto fail;
    if (row < rows) {           /* a NULL (None, or a NaN taken for one) */
        valid = PyByteArray_FromStringAndSize(NULL, rows);
        if (valid == NULL)
            goto fail;
        char *mask = PyByteArray_AS_STRING(valid);
        memset(mask, 1, (size_t)row);
        Py_ssize_t present[ROW_BLOCK];
        for (Py_ssize_t start = row; start < rows; start += ROW_BLOCK) {
            Py_ssize_t end = rows - start < ROW_BLOCK ? rows : start + ROW_BLOCK;
            Py_ssize_t n = present_rows(items, start, end, mask, present);
            for (Py_ssize_t j = 0; j < n; j++) {
                PREFETCH_AT(items, present, j, n);
                typed = coded_item(items[present[j]], text, nan_is_null, &table, distinct, out, &count);
                if (typed == 2)
                    mask[present[j]] = 0;
                else if (typed == 0)
                    goto decline;
                else if (typed < 0)
                    goto fail;
            }
        }
    }
    table_free(&table);
    if (PyByteArray_Resize(data, count * 8) < 0) {
        Py_DECREF(data);
        Py_XDECREF(valid);
        Py_DECREF(distinct);
        return NULL;
    }
    return Py_BuildValue("(NNN)", data, valid != NULL ? valid : Py_NewRef(Py_None), distinct);

decline:
    table_free(&table);
    Py_DECREF(data);
    Py_XDECREF(valid);
    Py_DECREF(distinct);
    Py_RETURN_NONE;
fail:
    table_free(&table);
    Py_DECREF(data);
    Py_XDECREF(valid);
    Py_XDECREF(distinct);
    return NULL;
}

static PyMethodDef methods[] = {
    {"numbers", numbers, METH_VARARGS, numbers_doc},
    {"codes", codes, METH_VARARGS, codes_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pylists",
    "Python lists typed in one pass (see pylists.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__pylists(void)
{
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
    return PyModule_Create(&module);
}
