/* Avro binary records decoded in C, for `runtime/avro_blocks.py` (the manifests of a table).
 *
 * fastavro decodes a Paimon manifest entry (a record of ~25 fields, two nested records of
 * statistics, an embedded file index) in ~20-50 us: a 100k-file table's manifests took seconds
 * to read, most of a plan. This walks a block's bytes once with a schema compiled in Python
 * (`avro_blocks.compile_schema`: nested tuples, below) and builds what fastavro builds (dicts,
 * lists, str, bytes, int, float, bool, None), ~1-2 us a record. Every read is bounds-checked:
 * malformed bytes raise `ValueError(reason, offset, path)`, the offset in the block and the
 * field path as a list of names and item numbers, innermost first, which the caller turns into
 * a FormatError. A schema it does not know, the caller reads with fastavro instead.
 *
 * A compiled schema is a tuple whose first item is the kind:
 *   (NUL,) (BOOLEAN,) (INT,) (LONG,) (FLOAT,) (DOUBLE,) (BYTES,) (STRING,)
 *   (RECORD, names: tuple[str], types: tuple[schema])   (UNION, branches: tuple[schema])
 *   (ARRAY, item)   (MAP, value)   (ENUM, symbols: tuple[str])   (FIXED, size)
 *   (CONVERT, schema, function): the value decoded by `schema`, passed through `function`
 *   (fastavro's logical types: timestamp-millis to datetime, ...).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { NUL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, RECORD, UNION, ARRAY, MAP, ENUM,
       FIXED, CONVERT };

typedef struct {
    const uint8_t *data;
    Py_ssize_t size;
    Py_ssize_t pos;
    PyObject *path;             /* list: where the error is, innermost first */
    const char *reason;         /* set with pos at the failure, NULL while none */
    Py_ssize_t at;
    int64_t items;              /* array and map items so far: bounded by the bytes (below) */
} Reader;

/* Items that take no bytes (nulls, empty records, fixed(0)) cost nothing to claim: the items
 * of one call may exceed its bytes by this many, so a few bytes cannot ask for millions. */
#define ZERO_WIDTH_ITEMS (1 << 20)

static int
fail(Reader *r, const char *reason, Py_ssize_t at)
{
    if (r->reason == NULL && !PyErr_Occurred()) {
        r->reason = reason;
        r->at = at;
    }
    return -1;
}

/* A zigzag varint of at most 10 bytes. */
static int
read_long(Reader *r, int64_t *out)
{
    uint64_t value = 0;
    int shift = 0;
    Py_ssize_t start = r->pos;
    while (1) {
        if (r->pos >= r->size)
            return fail(r, "truncated varint", start);
        uint8_t b = r->data[r->pos++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
        if (shift > 63)
            return fail(r, "varint longer than 10 bytes", start);
    }
    *out = (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
    return 0;
}

static int
read_length(Reader *r, Py_ssize_t *out)
{
    Py_ssize_t start = r->pos;
    int64_t n;
    if (read_long(r, &n) < 0)
        return -1;
    if (n < 0)
        return fail(r, "negative length", start);
    if (n > r->size - r->pos)
        return fail(r, "length beyond the block", start);
    *out = (Py_ssize_t)n;
    return 0;
}

static PyObject *decode(Reader *r, PyObject *schema);

static int
note(Reader *r, PyObject *where)
{
    /* on the way out of a failure: record where it was (the innermost first) */
    if (r->reason != NULL && where != NULL)
        PyList_Append(r->path, where);
    return -1;
}

static PyObject *
decode_record(Reader *r, PyObject *names, PyObject *types)
{
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = decode(r, PyTuple_GET_ITEM(types, i));
        if (value == NULL) {
            note(r, PyTuple_GET_ITEM(names, i));
            Py_DECREF(out);
            return NULL;
        }
        int rc = PyDict_SetItem(out, PyTuple_GET_ITEM(names, i), value);
        Py_DECREF(value);
        if (rc < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

/* An array's or a map's blocks: a count (negative: followed by the block's byte size), items,
 * until a count of 0. */
static PyObject *
decode_blocks(Reader *r, PyObject *item, int is_map)
{
    PyObject *out = is_map ? PyDict_New() : PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t index = 0;
    while (1) {
        Py_ssize_t start = r->pos;
        int64_t count;
        if (read_long(r, &count) < 0)
            goto error;
        if (count == 0)
            break;
        if (count < 0) {
            int64_t bytes;
            if (count == INT64_MIN) {
                fail(r, "bad block count", start);
                goto error;
            }
            count = -count;
            if (read_long(r, &bytes) < 0)
                goto error;
        }
        r->items += count;
        if (count > r->size - r->pos + ZERO_WIDTH_ITEMS || r->items > r->size + ZERO_WIDTH_ITEMS) {
            fail(r, "block count beyond the block", start);
            goto error;
        }
        for (int64_t j = 0; j < count; j++, index++) {
            PyObject *key = NULL;
            if (is_map) {
                Py_ssize_t key_start = r->pos, length;
                if (read_length(r, &length) < 0)
                    goto error;
                key = PyUnicode_DecodeUTF8((const char *)r->data + r->pos, length, "strict");
                if (key == NULL) {
                    if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                        PyErr_Clear();
                    fail(r, "a map key is not UTF-8", key_start);
                    goto error;
                }
                r->pos += length;
            }
            PyObject *value = decode(r, item);
            if (value == NULL) {
                PyObject *where = key != NULL ? key : PyLong_FromSsize_t(index);
                note(r, where);
                if (key == NULL)
                    Py_XDECREF(where);
                Py_XDECREF(key);
                goto error;
            }
            int rc = is_map ? PyDict_SetItem(out, key, value) : PyList_Append(out, value);
            Py_XDECREF(key);
            Py_DECREF(value);
            if (rc < 0)
                goto error;
        }
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
decode(Reader *r, PyObject *schema)
{
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(schema, 0));
    Py_ssize_t start = r->pos;
    switch (kind) {
    case NUL:
        Py_RETURN_NONE;
    case BOOLEAN:
        if (r->pos >= r->size) {
            fail(r, "truncated boolean", start);
            return NULL;
        }
        if (r->data[r->pos] > 1) {
            fail(r, "a boolean is neither 0 nor 1", start);
            return NULL;
        }
        return PyBool_FromLong(r->data[r->pos++]);
    case INT:
    case LONG: {
        int64_t value;
        if (read_long(r, &value) < 0)
            return NULL;
        if (kind == INT && (value < INT32_MIN || value > INT32_MAX)) {
            fail(r, "an int beyond 32 bits", start);
            return NULL;
        }
        return PyLong_FromLongLong(value);
    }
    case FLOAT:
    case DOUBLE: {
        Py_ssize_t width = kind == FLOAT ? 4 : 8;
        if (r->size - r->pos < width) {
            fail(r, "truncated floating-point number", start);
            return NULL;
        }
        double value = kind == FLOAT ? PyFloat_Unpack4((const char *)r->data + r->pos, 1)
                                     : PyFloat_Unpack8((const char *)r->data + r->pos, 1);
        if (value == -1.0 && PyErr_Occurred())
            return NULL;
        r->pos += width;
        return PyFloat_FromDouble(value);
    }
    case BYTES:
    case STRING: {
        Py_ssize_t length;
        if (read_length(r, &length) < 0)
            return NULL;
        const char *at = (const char *)r->data + r->pos;
        r->pos += length;
        if (kind == BYTES)
            return PyBytes_FromStringAndSize(at, length);
        PyObject *text = PyUnicode_DecodeUTF8(at, length, "strict");
        if (text == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                PyErr_Clear();
            fail(r, "a string is not UTF-8", start);
        }
        return text;
    }
    case FIXED: {
        Py_ssize_t length = PyLong_AsSsize_t(PyTuple_GET_ITEM(schema, 1));
        if (length < 0 || r->size - r->pos < length) {
            fail(r, "truncated fixed", start);
            return NULL;
        }
        r->pos += length;
        return PyBytes_FromStringAndSize((const char *)r->data + start, length);
    }
    case RECORD:
        return decode_record(r, PyTuple_GET_ITEM(schema, 1), PyTuple_GET_ITEM(schema, 2));
    case UNION:
    case ENUM: {
        PyObject *choices = PyTuple_GET_ITEM(schema, 1);
        int64_t index;
        if (read_long(r, &index) < 0)
            return NULL;
        if (index < 0 || index >= PyTuple_GET_SIZE(choices)) {
            fail(r, kind == UNION ? "union branch out of range" : "enum symbol out of range", start);
            return NULL;
        }
        PyObject *choice = PyTuple_GET_ITEM(choices, (Py_ssize_t)index);
        if (kind == ENUM) {
            Py_INCREF(choice);
            return choice;
        }
        return decode(r, choice);
    }
    case ARRAY:
    case MAP:
        return decode_blocks(r, PyTuple_GET_ITEM(schema, 1), kind == MAP);
    case CONVERT: {
        PyObject *value = decode(r, PyTuple_GET_ITEM(schema, 1));
        if (value == NULL || value == Py_None)
            return value;
        PyObject *converted = PyObject_CallOneArg(PyTuple_GET_ITEM(schema, 2), value);
        Py_DECREF(value);
        return converted;
    }
    default:
        PyErr_Format(PyExc_TypeError, "unknown compiled Avro kind %ld", kind);
        return NULL;
    }
}

/* records(data, count, schema, /) -> list: `count` records of `schema` filling `data` (a
 * decompressed block) exactly. */
static PyObject *
records(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    PyObject *schema;
    if (!PyArg_ParseTuple(args, "y*nO!:records", &view, &count, &PyTuple_Type, &schema))
        return NULL;
    Reader r = {view.buf, view.len, 0, NULL, NULL, 0, 0};
    PyObject *out = NULL;
    r.path = PyList_New(0);
    if (r.path == NULL)
        goto done;
    if (count < 0 || count > view.len) {
        fail(&r, "record count beyond the block", 0);
        goto error;
    }
    out = PyList_New(count);
    if (out == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *record = decode(&r, schema);
        if (record == NULL) {
            PyObject *where = PyLong_FromSsize_t(i);
            note(&r, where);
            Py_XDECREF(where);
            goto error;
        }
        PyList_SET_ITEM(out, i, record);
    }
    if (r.pos != r.size) {
        fail(&r, "bytes after the block's records", r.pos);
        goto error;
    }
    goto done;
error:
    Py_CLEAR(out);
    if (r.reason != NULL && !PyErr_Occurred()) {
        PyObject *err = Py_BuildValue("(snO)", r.reason, r.at, r.path);
        if (err != NULL) {
            PyErr_SetObject(PyExc_ValueError, err);
            Py_DECREF(err);
        }
    }
done:
    Py_XDECREF(r.path);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"records", records, METH_VARARGS, "Decode a block's records with a compiled schema."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_avro", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__avro(void)
{
    return PyModule_Create(&module);
}
