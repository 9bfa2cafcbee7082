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

/* PyFloat_Unpack4/8 are public from Python 3.11; 3.10 has them as _PyFloat_Unpack4/8 (the
 * same functions: `le` = 1 reads little-endian, as Avro stores floats). */
#if PY_VERSION_HEX < 0x030B0000
#define PyFloat_Unpack4(p, le) _PyFloat_Unpack4((const unsigned char *)(p), (le))
#define PyFloat_Unpack8(p, le) _PyFloat_Unpack8((const unsigned char *)(p), (le))
#endif

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
    int tuples;                 /* arrays as tuples (`pick`), else lists */
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

/* The failure `fail` recorded, raised as ValueError((reason, offset, path)) for the caller to
 * locate; nothing when a Python error is already set. */
static void
raise_failure(const Reader *r)
{
    if (r->reason != NULL && !PyErr_Occurred()) {
        PyObject *err = Py_BuildValue("(snO)", r->reason, r->at, r->path);
        if (err != NULL) {
            PyErr_SetObject(PyExc_ValueError, err);
            Py_DECREF(err);
        }
    }
}

/* A zigzag varint of at most 10 bytes (`read_long`: most are one byte, read inline). */
static int
read_long_bytes(Reader *r, int64_t *out)
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

static inline int
read_long(Reader *r, int64_t *out)
{
    if (r->pos < r->size && r->data[r->pos] < 0x80) {
        uint8_t b = r->data[r->pos++];
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        return 0;
    }
    return read_long_bytes(r, out);
}

static inline int
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

/* A bytes or string value passed over (its UTF-8 never read, never checked). */
static inline int
skip_length(Reader *r)
{
    Py_ssize_t length;
    if (read_length(r, &length) < 0)
        return -1;
    r->pos += length;
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

/* A length-prefixed bytes or UTF-8 string value starting at `start`. */
static PyObject *
bytes_or_text(Reader *r, int is_bytes, Py_ssize_t start)
{
    Py_ssize_t length;
    if (read_length(r, &length) < 0)
        return NULL;
    const char *at = (const char *)r->data + r->pos;
    r->pos += length;
    if (is_bytes)
        return PyBytes_FromStringAndSize(at, length);
    PyObject *text = PyUnicode_DecodeUTF8(at, length, "strict");
    if (text == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            PyErr_Clear();
        fail(r, "a string is not UTF-8", start);
    }
    return text;
}

/* The next block's item count of an array or a map (a negative count is followed by the
 * block's byte size), checked against the bytes left: 1, or 0 past the last block, or -1. */
static int
block_count(Reader *r, int64_t *count)
{
    Py_ssize_t start = r->pos;
    if (read_long(r, count) < 0)
        return -1;
    if (*count == 0)
        return 0;
    if (*count < 0) {
        int64_t bytes;
        if (*count == INT64_MIN)
            return fail(r, "bad block count", start);
        *count = -*count;
        if (read_long(r, &bytes) < 0)
            return -1;
    }
    r->items += *count;
    if (*count > r->size - r->pos + ZERO_WIDTH_ITEMS || r->items > r->size + ZERO_WIDTH_ITEMS)
        return fail(r, "block count beyond the block", start);
    return 1;
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
        int64_t count;
        int more = block_count(r, &count);
        if (more < 0)
            goto error;
        if (more == 0)
            break;
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
    case STRING:
        return bytes_or_text(r, kind == BYTES, start);
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
    case MAP: {
        PyObject *items = decode_blocks(r, PyTuple_GET_ITEM(schema, 1), kind == MAP);
        if (items == NULL || kind == MAP || !r->tuples)
            return items;
        PyObject *tuple = PyList_AsTuple(items);      /* an empty one: the () singleton */
        Py_DECREF(items);
        return tuple;
    }
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
records(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    PyObject *schema;
    if (!PyArg_ParseTuple(args, "y*nO!:records", &view, &count, &PyTuple_Type, &schema))
        return NULL;
    Reader r = {view.buf, view.len, 0, NULL, NULL, 0, 0, 0};
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
    raise_failure(&r);
done:
    Py_XDECREF(r.path);
    PyBuffer_Release(&view);
    return out;
}

/* ------------------------------------------------------------------------------------------
 * Some fields only: the manifest entries of a plan.
 *
 * A plan needs ~20 of a manifest entry's ~30 values, some nested (`_FILE._VALUE_STATS`), and
 * builds one object of them: the dicts `records` builds (three an entry) and the values it
 * converts (`_CREATION_TIME` to a datetime) were most of a manifest's decode. `pick` decodes
 * each record into one flat tuple of the fields a program names and walks over the others
 * building nothing (`skip`: every length, count, branch and range checked as `decode` checks
 * them, except that a skipped string's UTF-8 and a skipped logical type's conversion are not).
 *
 * `program(schema, picks, width, shared)` compiles a RECORD schema and its picks once into a
 * tree of `Node`s (walking the Python tuples cost ~1 us an entry: a kind's PyLong per value).
 * `picks` parallels a RECORD's fields: None (skipped), an int (the slot of the output tuple
 * the value goes to) or a tuple (the picks of a nested RECORD field); slots no field names
 * stay None. Arrays come as tuples (immutable, kept: an empty one is no new object). The values
 * of the `shared` slots repeat from entry to entry (a partition's BinaryRow, the statistics'
 * column names and null counts): each distinct encoding is decoded once per `pick` call and
 * the one object shared (a field is first skipped, then looked up by its bytes).
 */

typedef struct Node Node;
struct Node {
    long kind;
    Py_ssize_t slot;            /* the output slot of a picked field, else -1 */
    int shared;                 /* its values interned (`shared`) */
    int picked;                 /* a RECORD with picked fields below it */
    Py_ssize_t size;            /* children; FIXED: its size; ENUM: its symbols */
    Node **children;            /* RECORD fields, UNION branches, ARRAY/MAP item, CONVERT inner */
    PyObject *names;            /* RECORD: its field names (borrowed from the program's schema) */
    PyObject *schema;           /* borrowed: `decode`s the values built the generic way */
};

typedef struct {
    PyObject *schema;           /* held: the nodes borrow from it */
    Py_ssize_t width;
    Node *root;
} Program;

static void
free_node(Node *node)
{
    if (node == NULL)
        return;
    if (node->children != NULL) {
        for (Py_ssize_t i = 0; i < node->size; i++)
            free_node(node->children[i]);
        PyMem_Free(node->children);
    }
    PyMem_Free(node);
}

static Node *
compile_node(PyObject *schema, PyObject *picks, Py_ssize_t width, PyObject *shared, int depth)
{
    if (!PyTuple_Check(schema) || PyTuple_GET_SIZE(schema) < 1 || depth > 256) {
        PyErr_SetString(PyExc_TypeError, "not a compiled Avro schema");
        return NULL;
    }
    Node *node = PyMem_Calloc(1, sizeof(Node));
    if (node == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    node->slot = -1;
    node->schema = schema;
    node->kind = PyLong_AsLong(PyTuple_GET_ITEM(schema, 0));
    Py_ssize_t arity = PyTuple_GET_SIZE(schema);
    PyObject *items = NULL;
    switch (node->kind) {
    case NUL: case BOOLEAN: case INT: case LONG: case FLOAT: case DOUBLE: case BYTES: case STRING:
        return node;
    case FIXED:
        if (arity < 2)
            goto bad;
        node->size = PyLong_AsSsize_t(PyTuple_GET_ITEM(schema, 1));
        if (node->size < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a fixed of negative size");
            goto error;
        }
        return node;
    case ENUM:
        if (arity < 2 || !PyTuple_Check(PyTuple_GET_ITEM(schema, 1)))
            goto bad;
        node->size = PyTuple_GET_SIZE(PyTuple_GET_ITEM(schema, 1));
        return node;
    case RECORD:
        if (arity < 3 || !PyTuple_Check(PyTuple_GET_ITEM(schema, 1))
                || !PyTuple_Check(PyTuple_GET_ITEM(schema, 2))
                || PyTuple_GET_SIZE(PyTuple_GET_ITEM(schema, 1)) != PyTuple_GET_SIZE(PyTuple_GET_ITEM(schema, 2)))
            goto bad;
        node->names = PyTuple_GET_ITEM(schema, 1);
        items = PyTuple_GET_ITEM(schema, 2);
        if (picks != NULL && PyTuple_GET_SIZE(picks) != PyTuple_GET_SIZE(items)) {
            PyErr_SetString(PyExc_TypeError, "picks do not match the record's fields");
            goto error;
        }
        break;
    case UNION:
        if (arity < 2 || !PyTuple_Check(PyTuple_GET_ITEM(schema, 1)))
            goto bad;
        items = PyTuple_GET_ITEM(schema, 1);
        break;
    case ARRAY: case MAP: case CONVERT:
        if (arity < 2 || (node->kind == CONVERT && arity < 3))
            goto bad;
        items = PyTuple_Pack(1, PyTuple_GET_ITEM(schema, 1));
        if (items == NULL)
            goto error;
        break;
    default:
        PyErr_Format(PyExc_TypeError, "unknown compiled Avro kind %ld", node->kind);
        goto error;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    node->children = PyMem_Calloc(n ? n : 1, sizeof(Node *));
    if (node->children == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    node->size = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pick = picks == NULL ? Py_None : PyTuple_GET_ITEM(picks, i);
        int nested = PyTuple_Check(pick);
        Node *child = compile_node(PyTuple_GET_ITEM(items, i), nested ? pick : NULL, width, shared,
                                   depth + 1);
        if (child == NULL)
            goto error;
        node->children[i] = child;
        if (nested) {
            if (child->kind != RECORD) {
                PyErr_SetString(PyExc_TypeError, "picks below a field that is no record");
                goto error;
            }
            node->picked |= child->picked;
        } else if (pick != Py_None) {
            child->slot = PyLong_AsSsize_t(pick);
            if (child->slot < 0 || child->slot >= width) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "a pick's slot is out of range");
                goto error;
            }
            int is_shared = PySequence_Contains(shared, pick);
            if (is_shared < 0)
                goto error;
            child->shared = is_shared;
            node->picked = 1;
        }
    }
    if (node->kind != RECORD && node->kind != UNION)
        Py_DECREF(items);
    return node;
bad:
    PyErr_SetString(PyExc_TypeError, "not a compiled Avro schema");
error:
    if (items != NULL && node->kind != RECORD && node->kind != UNION)
        Py_DECREF(items);
    free_node(node);
    return NULL;
}

static void
free_program(PyObject *capsule)
{
    Program *program = PyCapsule_GetPointer(capsule, "paimon_schema.avro.program");
    if (program == NULL)
        return;
    free_node(program->root);
    Py_XDECREF(program->schema);
    PyMem_Free(program);
}

/* program(schema, picks, width, shared, /) -> capsule: `pick`'s compiled schema (above). */
static PyObject *
program(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *schema, *picks, *shared;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "O!O!nO:program", &PyTuple_Type, &schema, &PyTuple_Type, &picks,
                          &width, &shared))
        return NULL;
    if (width < 0 || width > 1024) {
        PyErr_SetString(PyExc_ValueError, "width must be 0 to 1024");
        return NULL;
    }
    Program *out = PyMem_Calloc(1, sizeof(Program));
    if (out == NULL)
        return PyErr_NoMemory();
    out->root = compile_node(schema, picks, width, shared, 0);
    if (out->root == NULL || out->root->kind != RECORD) {
        if (out->root != NULL)
            PyErr_SetString(PyExc_TypeError, "picks are of a record");
        free_node(out->root);
        PyMem_Free(out);
        return NULL;
    }
    Py_INCREF(schema);
    out->schema = schema;
    out->width = width;
    PyObject *capsule = PyCapsule_New(out, "paimon_schema.avro.program", free_program);
    if (capsule == NULL) {
        free_node(out->root);
        Py_DECREF(schema);
        PyMem_Free(out);
    }
    return capsule;
}

static inline int
skip(Reader *r, const Node *node);

static int
skip_blocks(Reader *r, const Node *item, int is_map)
{
    Py_ssize_t index = 0;
    while (1) {
        int64_t count;
        int more = block_count(r, &count);
        if (more <= 0)
            return more;
        for (int64_t j = 0; j < count; j++, index++) {
            if (is_map && skip_length(r) < 0)       /* the key */
                return -1;
            if (skip(r, item) < 0) {
                PyObject *where = PyLong_FromSsize_t(index);
                note(r, where);
                Py_XDECREF(where);
                return -1;
            }
        }
    }
}

static int
skip_node(Reader *r, const Node *node);

/* `skip_node`, what most fields are (a long, a string or bytes, a null, a union of them)
 * inline. */
static inline int
skip(Reader *r, const Node *node)
{
    while (1) {
        switch (node->kind) {
        case NUL:
            return 0;
        case LONG: {
            int64_t value;
            return read_long(r, &value);
        }
        case BYTES:
        case STRING:
            return skip_length(r);
        case UNION: {
            Py_ssize_t start = r->pos;
            int64_t index;
            if (read_long(r, &index) < 0)
                return -1;
            if (index < 0 || index >= node->size)
                return fail(r, "union branch out of range", start);
            node = node->children[index];
            break;
        }
        default:
            return skip_node(r, node);
        }
    }
}

static int
skip_node(Reader *r, const Node *node)
{
    Py_ssize_t start = r->pos;
    switch (node->kind) {
    case NUL:
        return 0;
    case BOOLEAN:
        if (r->pos >= r->size)
            return fail(r, "truncated boolean", start);
        if (r->data[r->pos] > 1)
            return fail(r, "a boolean is neither 0 nor 1", start);
        r->pos++;
        return 0;
    case INT:
    case LONG: {
        int64_t value;
        if (read_long(r, &value) < 0)
            return -1;
        if (node->kind == INT && (value < INT32_MIN || value > INT32_MAX))
            return fail(r, "an int beyond 32 bits", start);
        return 0;
    }
    case FLOAT:
    case DOUBLE: {
        Py_ssize_t width = node->kind == FLOAT ? 4 : 8;
        if (r->size - r->pos < width)
            return fail(r, "truncated floating-point number", start);
        r->pos += width;
        return 0;
    }
    case BYTES:
    case STRING:
        return skip_length(r);
    case FIXED:
        if (r->size - r->pos < node->size)
            return fail(r, "truncated fixed", start);
        r->pos += node->size;
        return 0;
    case RECORD:
        for (Py_ssize_t i = 0; i < node->size; i++)
            if (skip(r, node->children[i]) < 0)
                return note(r, PyTuple_GET_ITEM(node->names, i));
        return 0;
    case UNION:
    case ENUM: {
        int64_t index;
        if (read_long(r, &index) < 0)
            return -1;
        if (index < 0 || index >= node->size)
            return fail(r, node->kind == UNION ? "union branch out of range"
                                               : "enum symbol out of range", start);
        return node->kind == UNION ? skip(r, node->children[index]) : 0;
    }
    case ARRAY:
    case MAP:
        return skip_blocks(r, node->children[0], node->kind == MAP);
    default:        /* CONVERT */
        return skip(r, node->children[0]);
    }
}

/* `tuple` untracked by the collector when it holds no tracked object (CPython's own rule for
 * tuples, applied now rather than by the collector's next pass over every one of them). */
static void
untrack_atomic(PyObject *tuple)
{
    if (!PyObject_GC_IsTracked(tuple))
        return;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (PyType_IS_GC(Py_TYPE(item)) && PyObject_GC_IsTracked(item))
            return;
    }
    PyObject_GC_UnTrack(tuple);
}

static PyObject *value_of(Reader *r, const Node *node);

/* An array's items as a tuple, built without the list `decode` builds (as `decode_blocks`
 * checks and locates them). */
static PyObject *
array_of(Reader *r, const Node *item)
{
    PyObject *stack[16], **items = stack;
    Py_ssize_t n = 0, capacity = 16;
    PyObject *out = NULL;
    while (1) {
        int64_t count;
        int more = block_count(r, &count);
        if (more < 0)
            goto done;
        if (more == 0)
            break;
        for (int64_t j = 0; j < count; j++) {
            if (n == capacity) {
                PyObject **grown = PyMem_Malloc(sizeof(PyObject *) * (size_t)capacity * 2);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                memcpy(grown, items, sizeof(PyObject *) * (size_t)n);
                if (items != stack)
                    PyMem_Free(items);
                items = grown;
                capacity *= 2;
            }
            PyObject *value = value_of(r, item);
            if (value == NULL) {
                PyObject *where = PyLong_FromSsize_t(n);
                note(r, where);
                Py_XDECREF(where);
                goto done;
            }
            items[n++] = value;
        }
    }
    out = PyTuple_New(n);           /* an empty one: the () singleton */
    if (out != NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(out, i, items[i]);
        n = 0;
        untrack_atomic(out);
    }
done:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_DECREF(items[i]);
    if (items != stack)
        PyMem_Free(items);
    return out;
}

/* A picked value, as `decode` builds it with arrays as tuples. */
static PyObject *
value_of(Reader *r, const Node *node)
{
    Py_ssize_t start = r->pos;
    switch (node->kind) {
    case NUL:
        Py_RETURN_NONE;
    case INT:
    case LONG: {
        int64_t value;
        if (read_long(r, &value) < 0)
            return NULL;
        if (node->kind == INT && (value < INT32_MIN || value > INT32_MAX)) {
            fail(r, "an int beyond 32 bits", start);
            return NULL;
        }
        return PyLong_FromLongLong(value);
    }
    case BYTES:
    case STRING:
        return bytes_or_text(r, node->kind == BYTES, start);
    case UNION: {
        int64_t index;
        if (read_long(r, &index) < 0)
            return NULL;
        if (index < 0 || index >= node->size) {
            fail(r, "union branch out of range", start);
            return NULL;
        }
        return value_of(r, node->children[index]);
    }
    case ARRAY:
        return array_of(r, node->children[0]);
    default:
        return decode(r, node->schema);
    }
}

/* The interned values of `shared` slots: an open-addressed table of (slot, encoding) ->
 * value, filled up to half its size (then further values are built as usual). */
#define INTERNED 1024

typedef struct {
    Py_hash_t hash;
    Py_ssize_t slot;
    PyObject *key;              /* the value's encoding (bytes) */
    PyObject *value;
} Interned;

static Py_hash_t
hash_span(const uint8_t *p, Py_ssize_t n, Py_ssize_t slot)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL * (uint64_t)(slot + 1) ^ (uint64_t)n, word;
    for (; n >= 8; p += 8, n -= 8) {           /* eight bytes a step: a partition's ~40 */
        memcpy(&word, p, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
    }
    word = 0;
    for (Py_ssize_t i = 0; i < n; i++)         /* (a short memcpy here stalls the multiply) */
        word |= (uint64_t)p[i] << (8 * i);
    h = (h ^ word) * 0xC4CEB9FE1A85EC53ULL;
    return (Py_hash_t)((h ^ (h >> 32)) >> 1);
}

/* A shared slot's value: skipped to find its encoding, then the interned one, else decoded. */
static PyObject *
shared_value(Reader *r, const Node *node, Interned *table, Py_ssize_t *used)
{
    Py_ssize_t start = r->pos;
    int64_t items = r->items;
    if (skip(r, node) < 0)
        return NULL;
    Py_ssize_t length = r->pos - start;
    const uint8_t *span = r->data + start;
    Py_hash_t hash = hash_span(span, length, node->slot);
    size_t at = (size_t)hash & (INTERNED - 1);
    for (; table[at].key != NULL; at = (at + 1) & (INTERNED - 1)) {
        if (table[at].hash == hash && table[at].slot == node->slot
                && PyBytes_GET_SIZE(table[at].key) == length
                && memcmp(PyBytes_AS_STRING(table[at].key), span, (size_t)length) == 0) {
            Py_INCREF(table[at].value);
            return table[at].value;
        }
    }
    r->pos = start;
    r->items = items;
    PyObject *value = value_of(r, node);
    if (value == NULL || *used >= INTERNED / 2)
        return value;
    PyObject *key = PyBytes_FromStringAndSize((const char *)span, length);
    if (key == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    Py_INCREF(value);
    table[at] = (Interned){hash, node->slot, key, value};
    ++*used;
    return value;
}

/* `pick`'s gate: the top record's slot `slot` holds a key (a manifest entry's partition) that
 * `judge` answers for, once per distinct key (`seen`, key -> its answer): where it answers
 * `excluded`, the record's later fields are walked over, not built. */
typedef struct {
    Py_ssize_t slot;
    PyObject *judge, *seen, *excluded;
} Gate;

/* The gate's answer for the record's key: 1 when it is excluded, 0 when not, -1 on error. */
static int
gate_excludes(const Gate *gate, PyObject *key)
{
    PyObject *answer = PyDict_GetItemWithError(gate->seen, key);
    if (answer == NULL) {
        if (PyErr_Occurred())
            return -1;
        answer = PyObject_CallOneArg(gate->judge, key);
        if (answer == NULL)
            return -1;
        int stored = PyDict_SetItem(gate->seen, key, answer);
        Py_DECREF(answer);              /* (`seen` holds it) */
        if (stored < 0)
            return -1;
    }
    return PyObject_RichCompareBool(answer, gate->excluded, Py_EQ);
}

/* A RECORD's fields: the picked ones decoded into `slots`, the others skipped; with a `gate`
 * (the top record only), the fields after an excluded key skipped too. */
static int
decode_picked(Reader *r, const Node *node, PyObject **slots, Interned *table, Py_ssize_t *used,
              const Gate *gate)
{
    for (Py_ssize_t i = 0; i < node->size; i++) {
        const Node *field = node->children[i];
        if (field->slot >= 0) {
            PyObject *value = field->shared ? shared_value(r, field, table, used)
                                            : value_of(r, field);
            if (value == NULL)
                return note(r, PyTuple_GET_ITEM(node->names, i));
            Py_XSETREF(slots[field->slot], value);
            if (gate != NULL && field->slot == gate->slot) {
                int excluded = gate_excludes(gate, value);
                if (excluded < 0)
                    return -1;
                if (excluded) {
                    for (i++; i < node->size; i++)
                        if (skip(r, node->children[i]) < 0)
                            return note(r, PyTuple_GET_ITEM(node->names, i));
                    return 0;
                }
            }
        } else if (field->picked) {
            if (decode_picked(r, field, slots, table, used, NULL) < 0)
                return note(r, PyTuple_GET_ITEM(node->names, i));
        } else if (skip(r, field) < 0) {
            return note(r, PyTuple_GET_ITEM(node->names, i));
        }
    }
    return 0;
}

/* pick(blocks, program, gate=None, /) -> list[tuple]: the records of each (start, count, data)
 * block `blocks` yields (`count` records of the program's RECORD filling the decompressed
 * `data` exactly; `start`, where the block is in its file, locates errors), each as a tuple of
 * the program's `width` slots, arrays as tuples; tuples of atomic values not tracked by the
 * collector (`untrack_atomic`). Each block is let go once read (an iterator decompresses the
 * next into the memory it leaves). A `gate` (slot, judge, seen, excluded) is `Gate`'s: a
 * record whose top-level `slot` value `judge` answers `excluded` for holds only that value and
 * those before it (the others None). Malformed bytes: ValueError(reason, offset, path, start). */
static PyObject *
pick(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blocks, *capsule, *gating = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O:pick", &blocks, &capsule, &gating))
        return NULL;
    Program *prog = PyCapsule_GetPointer(capsule, "paimon_schema.avro.program");
    if (prog == NULL)
        return NULL;
    Gate gate = {-1, NULL, NULL, NULL};
    if (gating != Py_None && !PyArg_ParseTuple(gating, "nOO!O:pick gate", &gate.slot, &gate.judge,
                                                 &PyDict_Type, &gate.seen, &gate.excluded))
        return NULL;
    if (gating != Py_None && (gate.slot < 0 || gate.slot >= prog->width)) {
        PyErr_SetString(PyExc_ValueError, "pick: the gate's slot is not the program's");
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(blocks);
    if (iterator == NULL)
        return NULL;
    Interned *table = PyMem_Calloc(INTERNED, sizeof(Interned));
    PyObject *out = PyList_New(0), *path = PyList_New(0), *block = NULL;
    Py_ssize_t used = 0, start = 0;
    Reader r = {NULL, 0, 0, path, NULL, 0, 0, 1};
    if (table == NULL || out == NULL || path == NULL) {
        if (table == NULL)
            PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    while ((block = PyIter_Next(iterator)) != NULL) {
        Py_buffer view;
        Py_ssize_t count;
        if (!PyArg_ParseTuple(block, "nny*:pick", &start, &count, &view))
            goto error;
        r.data = view.buf;
        r.size = view.len;
        r.pos = 0;
        r.items = 0;
        if (count < 0 || count > view.len) {
            fail(&r, "record count beyond the block", 0);
            PyBuffer_Release(&view);
            goto error;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *row = PyTuple_New(prog->width);
            if (row == NULL || PyList_Append(out, row) < 0) {
                Py_XDECREF(row);
                PyBuffer_Release(&view);
                goto error;
            }
            Py_DECREF(row);
            /* the slots stay NULL until filled (a tuple's dealloc takes them), then None:
             * ~20 references to None an entry made and dropped were a chain of stalls */
            PyObject **slots = &PyTuple_GET_ITEM(row, 0);
            if (decode_picked(&r, prog->root, slots, table, &used, gating == Py_None ? NULL : &gate) < 0) {
                PyObject *where = PyLong_FromSsize_t(i);
                note(&r, where);
                Py_XDECREF(where);
                PyBuffer_Release(&view);
                goto error;
            }
            for (Py_ssize_t k = 0; k < prog->width; k++) {
                if (slots[k] == NULL) {
                    Py_INCREF(Py_None);
                    slots[k] = Py_None;
                }
            }
            untrack_atomic(row);
        }
        PyBuffer_Release(&view);
        Py_CLEAR(block);
        if (r.pos != r.size) {
            fail(&r, "bytes after the block's records", r.pos);
            goto error;
        }
    }
    if (PyErr_Occurred())
        goto error;
    goto done;
error:
    Py_CLEAR(out);
    if (r.reason != NULL && !PyErr_Occurred()) {
        PyObject *err = Py_BuildValue("(snOn)", r.reason, r.at, r.path, start);
        if (err != NULL) {
            PyErr_SetObject(PyExc_ValueError, err);
            Py_DECREF(err);
        }
    }
done:
    if (table != NULL) {
        for (Py_ssize_t i = 0; i < INTERNED; i++) {
            Py_XDECREF(table[i].key);
            Py_XDECREF(table[i].value);
        }
        PyMem_Free(table);
    }
    Py_XDECREF(block);
    Py_XDECREF(path);
    Py_DECREF(iterator);
    return out;
}

/* ------------------------------------------------------------------------------------------
 * Planning: a decoded manifest's fold keys (`table.manifests._Decoded`).
 *
 * The fold needs each entry's kind and key (a tuple of some of its values), and a file's
 * values only for ADDs; five comprehensions over the picked rows were a third of a manifest's
 * decode. `entries` makes them in one pass, the rows and keys of atomic values untracked.
 */

static Py_ssize_t
length_of(PyObject *value)
{
    if (PyUnicode_Check(value))
        return PyUnicode_GET_LENGTH(value);
    if (PyBytes_Check(value))
        return PyBytes_GET_SIZE(value);
    return 0;
}

/* entries(rows, kind, key, files, add, everywhere, in_adds, /) -> (kinds, keys, adds, count,
 * length): of each row (a tuple), row[kind], the tuple of its values at the `key` slots (the
 * `files` slot's value as a tuple, () for None or an empty one), the row itself where its kind
 * equals `add` else None; how many rows are ADDs; the summed lengths (characters of a str,
 * bytes of bytes, else 0) of the rows' values at the `everywhere` slots and of the ADDs' at
 * the `in_adds` slots. */
static PyObject *
entries(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *rows, *key, *add, *everywhere, *in_adds;
    Py_ssize_t kind, files;
    if (!PyArg_ParseTuple(args, "O!nO!nOO!O!:entries", &PyList_Type, &rows, &kind, &PyTuple_Type,
                          &key, &files, &add, &PyTuple_Type, &everywhere, &PyTuple_Type, &in_adds))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), width = PyTuple_GET_SIZE(key);
    Py_ssize_t slots[64], all[16], adds_only[16];
    Py_ssize_t n_all = PyTuple_GET_SIZE(everywhere), n_adds = PyTuple_GET_SIZE(in_adds);
    if (width > 64 || n_all > 16 || n_adds > 16) {
        PyErr_SetString(PyExc_ValueError, "too many slots");
        return NULL;
    }
    Py_ssize_t highest = kind > files ? kind : files;
    for (Py_ssize_t k = 0; k < width + n_all + n_adds; k++) {
        PyObject *slot = k < width ? PyTuple_GET_ITEM(key, k)
                         : k < width + n_all ? PyTuple_GET_ITEM(everywhere, k - width)
                         : PyTuple_GET_ITEM(in_adds, k - width - n_all);
        Py_ssize_t value = PyLong_AsSsize_t(slot);
        if (value < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a negative slot");
            return NULL;
        }
        if (value > highest)
            highest = value;
        if (k < width)
            slots[k] = value;
        else if (k < width + n_all)
            all[k - width] = value;
        else
            adds_only[k - width - n_all] = value;
    }
    PyObject *kinds = PyList_New(n), *keys = PyList_New(n), *adds = PyList_New(n);
    Py_ssize_t count = 0, length = 0;
    if (kinds == NULL || keys == NULL || adds == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) <= highest) {
            PyErr_SetString(PyExc_TypeError, "a row is no tuple of the slots");
            goto error;
        }
        PyObject *kind_value = PyTuple_GET_ITEM(row, kind);
        Py_INCREF(kind_value);
        PyList_SET_ITEM(kinds, i, kind_value);
        int is_add = PyObject_RichCompareBool(kind_value, add, Py_EQ);
        if (is_add < 0)
            goto error;
        PyObject *entry = is_add ? row : Py_None;
        Py_INCREF(entry);
        PyList_SET_ITEM(adds, i, entry);
        count += is_add;
        PyObject *tuple = PyTuple_New(width);
        if (tuple == NULL)
            goto error;
        PyList_SET_ITEM(keys, i, tuple);
        for (Py_ssize_t k = 0; k < width; k++) {
            PyObject *value = PyTuple_GET_ITEM(row, slots[k]);
            if (slots[k] == files && !PyTuple_CheckExact(value)) {
                int truth = PyObject_IsTrue(value);
                if (truth < 0)
                    goto error;
                value = truth ? PySequence_Tuple(value) : PyTuple_New(0);
                if (value == NULL)
                    goto error;
            } else {
                Py_INCREF(value);
            }
            PyTuple_SET_ITEM(tuple, k, value);
        }
        untrack_atomic(tuple);
        untrack_atomic(row);
        for (Py_ssize_t k = 0; k < n_all; k++)
            length += length_of(PyTuple_GET_ITEM(row, all[k]));
        for (Py_ssize_t k = 0; is_add && k < n_adds; k++)
            length += length_of(PyTuple_GET_ITEM(row, adds_only[k]));
    }
    return Py_BuildValue("(NNNnn)", kinds, keys, adds, count, length);
error:
    Py_XDECREF(kinds);
    Py_XDECREF(keys);
    Py_XDECREF(adds);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Planning: one lookup in a data file's embedded file index, without Python objects.
 *
 * Planning a table evaluates the file index of every file the partitions and statistics keep
 * (`query.evaluate.quick_evaluate`); parsing each container and bitmap head in Python took
 * ~70 us a file, most of a big table's plan. `probe_bitmap` walks the container and the one
 * V2 index block a lookup of `key` needs, and answers only where the Python readers
 * (`layouts.file_index._parse_simple`, `bitmap_index.scan` and `_V2Reader`) would read the
 * same bytes without a warning or an error: anything else (damage, a V1 blob, several indexes
 * on the column, a streamed bitmap, ...) returns None and the caller takes the Python path,
 * which answers or raises its located FormatError. The stored bitmap itself is left to the
 * caller (`roaring_bitmap.deserialize`).
 */

static int32_t
be32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

static int64_t
be_signed(const uint8_t *p, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; i++)
        v = (v << 8) | p[i];
    if (width < 8 && (v >> (8 * width - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * width);
    return (int64_t)v;
}

/* A `writeUTF` name that is plain ASCII without NUL, as `file_index._ascii` accepts it: its
 * start and length, and the position after it; -1 for anything else. */
static Py_ssize_t
ascii_name(const uint8_t *d, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t *start, Py_ssize_t *len)
{
    if (pos + 2 > end)
        return -1;
    Py_ssize_t n = ((Py_ssize_t)d[pos] << 8) | d[pos + 1];
    pos += 2;
    if (pos + n > end)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (d[pos + i] == 0 || d[pos + i] >= 0x80)
            return -1;
    *start = pos;
    *len = n;
    return pos + n;
}

typedef struct {
    int width;                  /* 0: string keys (s4 length, UTF-8); else a signed int's bytes */
    const uint8_t *key;         /* the probe, as stored: string bytes or big-endian int */
    Py_ssize_t key_len;
    int64_t int_key;
} Probe;

/* A stored key at `p` (`len` bytes of a string) against the probe, as Python compares the
 * parser's keys: bytes lexicographically, ints by value. */
static int
compare_key(const Probe *probe, const uint8_t *p, Py_ssize_t len)
{
    if (probe->width == 0) {
        Py_ssize_t n = len < probe->key_len ? len : probe->key_len;
        int c = memcmp(p, probe->key, (size_t)n);
        if (c != 0)
            return c < 0 ? -1 : 1;
        return len < probe->key_len ? -1 : len > probe->key_len;
    }
    int64_t v = be_signed(p, probe->width);
    return v < probe->int_key ? -1 : v > probe->int_key;
}

static int
compare_stored(const Probe *probe, const uint8_t *a, Py_ssize_t alen, const uint8_t *b, Py_ssize_t blen)
{
    Probe other = *probe;
    other.key = b;
    other.key_len = blen;
    if (probe->width)
        other.int_key = be_signed(b, probe->width);
    return compare_key(&other, a, alen);
}

/* A run of `count` records `key, s4 x ncols` from `pos` within `size` bytes (bitmap_index
 * `scan_records`): the key of record i at keys[i] (lengths in lens[i]), its s4s in
 * cols[i * ncols ...]; the end, or -1 where the Python scan declines (bytes run out, a
 * negative string length, an s4 below its minimum). */
static Py_ssize_t
scan_run(const uint8_t *d, Py_ssize_t pos, Py_ssize_t size, Py_ssize_t count, int width, int ncols,
         const int64_t *minimums, const uint8_t **keys, Py_ssize_t *lens, int32_t *cols)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t len;
        if (width == 0) {
            if (pos + 4 > size)
                return -1;
            len = be32(d + pos);
            if (len < 0)
                return -1;
            pos += 4;
        } else {
            len = width;
        }
        if (len > size - pos || (size - pos - len) < 4 * (Py_ssize_t)ncols)
            return -1;
        keys[i] = d + pos;
        lens[i] = len;
        pos += len;
        for (int c = 0; c < ncols; c++) {
            int32_t v = be32(d + pos);
            if (v < minimums[c])
                return -1;
            cols[i * ncols + c] = v;
            pos += 4;
        }
    }
    return pos;
}

enum { ANSWER_NO_INDEX, ANSWER_EMPTY_ENTRY, ANSWER_NO_ROWS, ANSWER_ONE_ROW, ANSWER_BITMAP };

/* The lookup in a V2 bitmap blob `b` of `n` bytes: an answer (ANSWER_*) with its values, or
 * -1 to decline. Allocation failures set a Python error and return -2. */
static int
probe_v2(const uint8_t *b, Py_ssize_t n, const Probe *probe, int64_t *values)
{
    if (n < 10 || b[0] != 2)
        return -1;
    int32_t num_rows = be32(b + 1), num_keys = be32(b + 5);
    uint8_t has_null = b[9];
    if (num_rows < 0 || num_keys < 0 || has_null > 1)
        return -1;
    Py_ssize_t pos = 10;
    if (has_null) {
        if (n < pos + 8 || be32(b + pos) > 0 || be32(b + pos + 4) < 0)
            return -1;
        pos += 8;
    }
    if (n < pos + 4)
        return -1;
    int32_t num_blocks = be32(b + pos);
    pos += 4;
    Py_ssize_t record = (probe->width ? probe->width : 4) + 4;
    if (num_blocks < 0 || num_blocks > (n - pos) / record)
        return -1;                                  /* (the scan would run out of bytes) */
    if ((num_blocks == 0) != (num_keys == 0) || num_blocks > num_keys)
        return -1;
    int result = -1;
    Py_ssize_t nb = num_blocks ? num_blocks : 1;
    const uint8_t **firsts = PyMem_Malloc(sizeof(*firsts) * nb);
    Py_ssize_t *first_lens = PyMem_Malloc(sizeof(*first_lens) * nb);
    int32_t *block_offsets = PyMem_Malloc(sizeof(*block_offsets) * nb);
    const uint8_t **keys = NULL;
    Py_ssize_t *lens = NULL;
    int32_t *cols = NULL;
    if (firsts == NULL || first_lens == NULL || block_offsets == NULL) {
        PyErr_NoMemory();
        result = -2;
        goto done;
    }
    static const int64_t ref_min[1] = {0};
    Py_ssize_t end = scan_run(b, pos, n, num_blocks, probe->width, 1, ref_min, firsts, first_lens,
                              block_offsets);
    if (end < 0 || n < end + 4)
        goto done;
    int32_t len_index_blocks = be32(b + end);
    if (len_index_blocks < 0)
        goto done;
    int64_t ofs_index_blocks = end + 4;
    /* `_check_secondary_index`: first keys strictly ascending, offsets inside the blocks */
    Py_ssize_t i = -1;
    for (Py_ssize_t r = 0; r < num_blocks; r++) {
        if (block_offsets[r] >= len_index_blocks)
            goto done;
        if (r && compare_stored(probe, firsts[r - 1], first_lens[r - 1], firsts[r], first_lens[r]) >= 0)
            goto done;
        if (compare_key(probe, firsts[r], first_lens[r]) <= 0)
            i = r;                                  /* bisect_right - 1 */
    }
    if (i < 0) {
        result = ANSWER_NO_ROWS;
        goto done;
    }
    /* `_load_block(i)`: the block's bytes alone, then what the binary searches rely on */
    int64_t start = ofs_index_blocks + block_offsets[i];
    int64_t size = (i + 1 < num_blocks ? block_offsets[i + 1] : len_index_blocks) - block_offsets[i];
    if (size < 4 || n < start + size)
        goto done;
    const uint8_t *block = b + start;
    int32_t count = be32(block);
    if (count < 1 || count > (size - 4) / ((probe->width ? probe->width : 4) + 8))
        goto done;
    keys = PyMem_Malloc(sizeof(*keys) * count);
    lens = PyMem_Malloc(sizeof(*lens) * count);
    cols = PyMem_Malloc(sizeof(*cols) * 2 * (size_t)count);
    if (keys == NULL || lens == NULL || cols == NULL) {
        PyErr_NoMemory();
        result = -2;
        goto done;
    }
    static const int64_t entry_min[2] = {INT32_MIN, -1};
    if (scan_run(block, 4, (Py_ssize_t)size, count, probe->width, 2, entry_min, keys, lens, cols) < 0)
        goto done;
    if (compare_stored(probe, keys[0], lens[0], firsts[i], first_lens[i]) != 0)
        goto done;
    for (Py_ssize_t j = 1; j < count; j++)
        if (compare_stored(probe, keys[j - 1], lens[j - 1], keys[j], lens[j]) >= 0)
            goto done;
    if (i + 1 < num_blocks
            && compare_stored(probe, keys[count - 1], lens[count - 1], firsts[i + 1], first_lens[i + 1]) >= 0)
        goto done;
    Py_ssize_t j = 0;
    while (j < count && compare_key(probe, keys[j], lens[j]) < 0)
        j++;
    if (j == count || compare_key(probe, keys[j], lens[j]) != 0) {
        result = ANSWER_NO_ROWS;
        goto done;
    }
    int64_t ofs_bitmap = cols[2 * j], len_bitmap = cols[2 * j + 1];
    if (ofs_bitmap < 0) {
        int64_t row = -1 - ofs_bitmap;
        if (row >= num_rows)
            goto done;
        values[0] = row;
        result = ANSWER_ONE_ROW;
        goto done;
    }
    int64_t at = ofs_index_blocks + len_index_blocks + ofs_bitmap;
    if (len_bitmap == -1 || at + len_bitmap > n)
        goto done;
    values[0] = at;
    values[1] = len_bitmap;
    values[2] = num_rows;
    result = ANSWER_BITMAP;
done:
    PyMem_Free(firsts);
    PyMem_Free(first_lens);
    PyMem_Free(block_offsets);
    PyMem_Free(keys);
    PyMem_Free(lens);
    PyMem_Free(cols);
    return result;
}

/* probe_bitmap(container, column, width, key, /) -> tuple | None: what the file-index
 * container `container` (bytes) says about `column` (ASCII bytes) for the bitmap key `key`
 * (string bytes with width 0, else an int stored in `width` bytes; None: only which entries
 * the column has):
 *   (0,) the column has no index entry; (1,) its one entry is empty (offset -1);
 *   (2,) its one bitmap index holds no such key; (3, row) the key's one row;
 *   (4, offset, length, num_rows) the key's stored bitmap, at `offset` of the container;
 * None wherever the Python path reads anything else (see above). */
/* The repeated-name checks compare each name with the earlier ones: a header of more columns
 * (or index types) than this is left to the Python path, so hostile headers cost no more than
 * PROBE_MAX_NAMES squared comparisons each. */
#define PROBE_MAX_NAMES 256

static PyObject *
probe_bitmap(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_obj, *key_obj;
    const char *column;
    Py_ssize_t column_len;
    int width;
    if (!PyArg_ParseTuple(args, "O!y#iO:probe_bitmap", &PyBytes_Type, &data_obj, &column,
                          &column_len, &width, &key_obj))
        return NULL;
    if (width != 0 && width != 1 && width != 2 && width != 4 && width != 8) {
        PyErr_SetString(PyExc_ValueError, "width must be 0, 1, 2, 4 or 8");
        return NULL;
    }
    const uint8_t *d = (const uint8_t *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t size = PyBytes_GET_SIZE(data_obj);
    /* `_parse_simple`: the container as read when nothing in it is unusual */
    static const uint8_t magic[8] = {0x00, 0x05, 0x4E, 0x4E, 0xD0, 0x1A, 0x35, 0xAE};
    if (size < 24 || memcmp(d, magic, 8) != 0 || be32(d + 8) != 1)
        Py_RETURN_NONE;
    int64_t head_length = be32(d + 12);
    if (head_length < 24 || head_length > size)
        Py_RETURN_NONE;
    Py_ssize_t end = (Py_ssize_t)head_length, pos = 16;
    int32_t column_count = be32(d + pos);
    pos += 4;
    if (column_count < 0 || column_count > PROBE_MAX_NAMES)
        Py_RETURN_NONE;
    Py_ssize_t found = 0, entry_type = 0, entry_type_len = 0;
    int64_t entry_offset = 0, entry_length = 0;
    Py_ssize_t names_start = pos;
    for (int32_t c = 0; c < column_count; c++) {
        Py_ssize_t name, name_len;
        Py_ssize_t next = ascii_name(d, pos, end, &name, &name_len);
        if (next < 0 || next + 4 > end)
            Py_RETURN_NONE;
        /* a repeated column name: the generated parser merges them (with a warning) */
        Py_ssize_t q = names_start;
        for (int32_t e = 0; e < c; e++) {
            Py_ssize_t other = 0, other_len = 0;
            q = ascii_name(d, q, end, &other, &other_len);
            if (other_len == name_len && memcmp(d + other, d + name, (size_t)name_len) == 0)
                Py_RETURN_NONE;
            int32_t skip = be32(d + q);
            q += 4;
            for (int32_t k = 0; k < skip; k++) {
                Py_ssize_t t = 0, t_len = 0;
                q = ascii_name(d, q, end, &t, &t_len) + 8;
            }
        }
        pos = next;
        int32_t index_count = be32(d + pos);
        pos += 4;
        if (index_count < 0 || index_count > PROBE_MAX_NAMES)
            Py_RETURN_NONE;
        int mine = name_len == column_len && memcmp(d + name, column, (size_t)column_len) == 0;
        Py_ssize_t types_start = pos;
        for (int32_t k = 0; k < index_count; k++) {
            Py_ssize_t type, type_len;
            Py_ssize_t after = ascii_name(d, pos, end, &type, &type_len);
            if (after < 0 || after + 8 > end)
                Py_RETURN_NONE;
            Py_ssize_t t = types_start;
            for (int32_t e = 0; e < k; e++) {           /* a repeated index type */
                Py_ssize_t other = 0, other_len = 0;
                t = ascii_name(d, t, end, &other, &other_len) + 8;
                if (other_len == type_len && memcmp(d + other, d + type, (size_t)type_len) == 0)
                    Py_RETURN_NONE;
            }
            int64_t offset = be32(d + after), length = be32(d + after + 4);
            pos = after + 8;
            if (!(offset == -1 && length == 0)
                    && (offset < head_length || length < 0 || offset + length > size))
                Py_RETURN_NONE;
            if (mine) {
                found++;
                entry_type = type;
                entry_type_len = type_len;
                entry_offset = offset;
                entry_length = length;
            }
        }
    }
    if (pos + 4 > end)
        Py_RETURN_NONE;
    int32_t redundant = be32(d + pos);
    pos += 4;
    if (redundant < 0 || pos + redundant != end)
        Py_RETURN_NONE;
    if (found == 0)
        return Py_BuildValue("(i)", ANSWER_NO_INDEX);
    if (found > 1)
        Py_RETURN_NONE;
    if (entry_offset == -1 && entry_length == 0)
        return Py_BuildValue("(i)", ANSWER_EMPTY_ENTRY);
    if (key_obj == Py_None || entry_type_len != 6 || memcmp(d + entry_type, "bitmap", 6) != 0)
        Py_RETURN_NONE;
    Probe probe = {width, NULL, 0, 0};
    if (width == 0) {
        if (!PyBytes_Check(key_obj)) {
            PyErr_SetString(PyExc_TypeError, "a string key is bytes");
            return NULL;
        }
        probe.key = (const uint8_t *)PyBytes_AS_STRING(key_obj);
        probe.key_len = PyBytes_GET_SIZE(key_obj);
    } else {
        probe.int_key = PyLong_AsLongLong(key_obj);
        if (probe.int_key == -1 && PyErr_Occurred())
            return NULL;
    }
    int64_t values[3] = {0, 0, 0};
    int answer = probe_v2(d + entry_offset, (Py_ssize_t)entry_length, &probe, values);
    if (answer == -2)
        return NULL;
    if (answer < 0)
        Py_RETURN_NONE;
    if (answer == ANSWER_ONE_ROW)
        return Py_BuildValue("(iL)", answer, (long long)values[0]);
    if (answer == ANSWER_BITMAP)
        return Py_BuildValue("(iLLL)", answer, (long long)(entry_offset + values[0]),
                             (long long)values[1], (long long)values[2]);
    return Py_BuildValue("(i)", answer);
}

static PyMethodDef methods[] = {
    {"records", records, METH_VARARGS, "Decode a block's records with a compiled schema."},
    {"program", program, METH_VARARGS, "Compile a record schema and its picks for `pick`."},
    {"pick", pick, METH_VARARGS, "Decode some fields of blocks' records into flat tuples."},
    {"entries", entries, METH_VARARGS, "A decoded manifest's kinds, fold keys and ADDs (see avro.c)."},
    {"probe_bitmap", probe_bitmap, METH_VARARGS,
     "One key's answer from a file-index container's bitmap index, or None (see avro.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_avro",
    "The manifests' Avro decoder (see avro.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__avro(void)
{
    return PyModule_Create(&module);
}
