/* The index writers' bulk loops, for `layouts/`: numpy has no vector form of them.
 *
 * - `bloom_add`: a bloom filter sets k pseudo-random bits per value. numpy has no scatter-OR
 *   that tolerates repeated positions; its best form sorts all k * n positions (about 160 ms
 *   for a million values, 2.3x Java's whole build). This loop writes straight into the packed
 *   bit set (cache-resident for a million items) in ~15 ms.
 * - `group_rows`: a bitmap index over a column with few distinct keys groups its rows with a
 *   cache-resident hash table and a counting sort, as Java's writer does with its HashMap:
 *   about twice as fast as numpy's 64-bit sort.
 * - `number_rows`: the same hash table numbering each row's key, without the grouping: a
 *   range-bitmap's codes of a column with few distinct keys, with no sort of the column.
 * - `pack_rows`, `split_packed`: a column with many distinct keys grouped by numpy's sort of
 *   `key << b | row`, the array built and the sorted one split into groups in two passes each.
 * - `serialize_groups`: every key's bitmap, run-optimized and serialized in the portable
 *   RoaringBitmap format, straight from the grouped rows: one pass, no bitmap object per key
 *   (a million rows cyclic over 100k keys spread each key over every container: building and
 *   serializing 100k pyroaring objects was most of the build); `mask_bitmap`: the NULL rows'
 *   bitmap straight from the validity bytes, 64 rows a word.
 * - `serialize_slices`: the same for the bit slices of a bit-sliced index (BSI and
 *   range-bitmap): slice i holds the rows whose value has bit i set; a boolean mask, an index
 *   and a pyroaring object per slice cost 1.5 s for a million BIGINTs' 124 slices.
 * - `column_slices`: a bit-sliced index (a BSI part, range-bitmap codes) straight from the
 *   column, a container's rows at a time, slicing only the bits that vary in each (a mostly
 *   NULL container over the list of its rows): no pass per slice; `value_presence`: which
 *   values of a small span occur (the range-bitmap dictionary of such a column with no hash
 *   or sort).
 * - `compress`, `split_rows`: a column's NULL rows set aside without a branch per row.
 * - `xxh64_each`, `xxh64_offsets`: the bloom filter's hash of strings and binaries (distinct
 *   ones, an Arrow array's), with no Python call or object each; `bloom_add_items`: a list's
 *   (or object array's) strings, binaries, ints or doubles hashed and added to the bit set in
 *   one pass over its items, skipping its NULLs: no array of hashes, no typed column, no
 *   validity.
 *
 * - `block_search`: the binary search of a btree global index block (an SST block of
 *   var-len-framed keys) for the first key at or above a probe, comparing keys in place as
 *   the column type orders them; in Python its ~17 key decodes were a cold lookup's next cost.
 * - `row_ids`: one btree value (a var_len_int count, then that many var_len_long row ids)
 *   into a list, checked as `sst.row_ids_of` checks it; a dozen varints cost ~15 us in Python.
 * - `lookup_block`: a cold point lookup's data block step in one call (its trailer and table
 *   checked, then searched and decoded as `find_row_ids` does): no block object per lookup.
 * - `btree_tail`, `btree_lookup`: a btree file's footer and index block checked from the
 *   file's last bytes (one read) in one call, and a point lookup's data block found, read
 *   (one pread), checked and searched in one more: a reader opened per lookup builds no
 *   object to check them, and its lookup makes one call where it made five.
 * - `java_map_replay`: java.util.HashMap's tree bins replayed for the keys that crowd a bucket
 *   (the bitmap writer's entry order); in Python it cost ~0.3 s for 100k sorted doubles.
 * - `string_records`: a bitmap index's string entries as bytes, each key read once.
 * - `v2_sort`, `v2_block_starts`, `v2_blocks`: bitmap V2's string keys sorted as Java compares
 *   bytes and written into index blocks in one call each (a radix pass over 8-byte prefixes).
 * - `stats_bounds`, `stats_nulls`, `read_pass`, `attributes`: planning's passes over a
 *   snapshot's files and their statistics rows, one column of each row at a time.
 * - `slot_offsets`, `new_slotted`, `untrack`: a plan's `DataFile`s made with their slots set
 *   directly, and its decoded manifest rows (tuples of atomics) untracked by the collector.
 * - `fold_into`, `live_files`, `read_sorted`, `slotted_rows`: a cold plan's fold of its
 *   manifests' entries, the `DataFile`s of the live ones, their read order and the
 *   `FileTask`s of the files it reads, each in one call.
 *
 * The writers' and lookups' loops run without the GIL on buffers the caller owns and keeps
 * alive (planning's passes read Python objects and hold it). The callers
 * keep a numpy path for a package built without a C compiler, and the tests prove both equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "pyitems.h"

/* ---------------------------------------------------------------------------------------- */
/* stats_bounds, stats_nulls: one column of the manifests' min/max statistics of many data
 * files at once. Planning a 100k-file table decoded both statistics rows of every file its
 * partitions kept, in Python (~4 us a file: a third of a warm plan), to compare one or two
 * columns with the filter's literals. These read the column in place and compare it, after
 * checking the whole row as `binary_row._decode_kinds` reads it: a row that would not decode
 * leaves the file's statistics unused, as `stats.file_stats` does. */

enum { SB_LESS, SB_EQUAL, SB_GREATER, SB_NONE, SB_UNUSABLE, SB_OTHER, SB_PYTHON };
enum { SB_LIT_NONE, SB_LIT_INT, SB_LIT_FLOAT, SB_LIT_BYTES };

typedef struct {
    int kind;
    int overflow;               /* SB_LIT_INT beyond int64: its sign */
    long long i;
    double f;
    const unsigned char *bytes;
    Py_ssize_t len;
} sb_literal;

static uint64_t
sb_le(const unsigned char *p, int width)
{
    uint64_t v = 0;
    for (int k = width - 1; k >= 0; k--)
        v = (v << 8) | p[k];
    return v;
}

/* Python's strict UTF-8 decoder's verdict: no overlong form, surrogate or code point past
 * U+10FFFF. */
static int
sb_utf8(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            need = 1;
        else if (c == 0xE0) {
            need = 2;
            lo = 0xA0;
        }
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            need = 2;
        else if (c == 0xED) {
            need = 2;
            hi = 0x9F;
        }
        else if (c == 0xF0) {
            need = 3;
            lo = 0x90;
        }
        else if (c >= 0xF1 && c <= 0xF3)
            need = 3;
        else if (c == 0xF4) {
            need = 3;
            hi = 0x8F;
        }
        else
            return 0;
        if (n - i - 1 < need || s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (Py_ssize_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return 0;
        i += need + 1;
    }
    return 1;
}

static int
sb_null(const unsigned char *d, Py_ssize_t field)
{
    Py_ssize_t bit = field + 8;
    return (d[4 + (bit >> 3)] >> (bit & 7)) & 1;
}

/* The bytes of string/bytes field `field` (not null) of a checked row: 0 when they are not
 * inside the row. */
static int
sb_var(const unsigned char *d, Py_ssize_t size, Py_ssize_t slot, const unsigned char **start,
       Py_ssize_t *len)
{
    if (d[slot + 7] & 0x80) {
        *len = d[slot + 7] & 0x7F;
        *start = d + slot;
        return *len <= 7;
    }
    uint64_t length = sb_le(d + slot, 4), offset = sb_le(d + slot + 4, 4);
    if (4 + offset + length > (uint64_t)size)
        return 0;
    *start = d + 4 + offset;
    *len = (Py_ssize_t)length;
    return 1;
}

/* Whether `d` decodes as a row of `kinds` (`_decode_kinds` answers values, not None). */
static int
sb_row_ok(const unsigned char *d, Py_ssize_t size, const char *kinds, Py_ssize_t arity)
{
    Py_ssize_t fixed = 4 + ((arity + 63 + 8) / 64) * 8;
    if (size < fixed + 8 * arity || (int32_t)(uint32_t)(((uint32_t)d[0] << 24) | ((uint32_t)d[1] << 16)
                                                         | ((uint32_t)d[2] << 8) | d[3]) != arity)
        return 0;
    for (Py_ssize_t i = 0; i < arity; i++) {
        if (sb_null(d, i))
            continue;
        Py_ssize_t slot = fixed + 8 * i;
        char kind = kinds[i];
        if (kind == 's' || kind == 'y') {
            const unsigned char *start;
            Py_ssize_t len;
            if (!sb_var(d, size, slot, &start, &len) || (kind == 's' && !sb_utf8(start, len)))
                return 0;
        }
        else if (kind == 'D') {
            int32_t days = (int32_t)(uint32_t)sb_le(d + slot, 4);
            if (days < -719162 || days > 2932896)      /* date(1, 1, 1) .. date(9999, 12, 31) */
                return 0;
        }
    }
    return 1;
}

static int
sb_order(int c)
{
    return c < 0 ? SB_LESS : c > 0 ? SB_GREATER : SB_EQUAL;
}

/* Field `field` of a checked row against the literal (Spark's order, `predicates._compare`);
 * SB_NONE where the field is no bound: NULL, NaN, a string of `limit` code points or more
 * (bytes: `limit` bytes). */
static char
sb_code(const unsigned char *d, Py_ssize_t size, const char *kinds, Py_ssize_t arity,
        Py_ssize_t field, const sb_literal *lit, Py_ssize_t limit)
{
    if (sb_null(d, field))
        return SB_NONE;
    Py_ssize_t slot = 4 + ((arity + 63 + 8) / 64) * 8 + 8 * field;
    const unsigned char *p = d + slot;
    long long v;
    switch (kinds[field]) {
    case '?':
        v = p[0] != 0;
        break;
    case 'b':
        v = (int8_t)p[0];
        break;
    case 'h':
        v = (int16_t)(uint16_t)sb_le(p, 2);
        break;
    case 'i':
    case 'D':
        v = (int32_t)(uint32_t)sb_le(p, 4);
        break;
    case 'q':
        v = (long long)sb_le(p, 8);
        break;
    case 'f':
    case 'd': {
        double x;
        if (kinds[field] == 'f') {
            uint32_t bits = (uint32_t)sb_le(p, 4);
            float f;
            memcpy(&f, &bits, 4);
            x = f;
        }
        else {
            uint64_t bits = sb_le(p, 8);
            memcpy(&x, &bits, 8);
        }
        if (isnan(x))
            return SB_NONE;
        if (lit->kind == SB_LIT_NONE)
            return SB_EQUAL;
        if (isnan(lit->f))
            return SB_LESS;                 /* NaN is above every number */
        return (char)sb_order((x > lit->f) - (x < lit->f));
    }
    default: {                              /* 's', 'y' */
        const unsigned char *start;
        Py_ssize_t len;
        if (!sb_var(d, size, slot, &start, &len))
            return SB_NONE;                 /* not reached: sb_row_ok checked the row */
        if (limit > 0) {                    /* code points of a string, bytes of bytes */
            Py_ssize_t chars = kinds[field] == 'y' ? len : 0;
            for (Py_ssize_t k = 0; k < len && kinds[field] == 's'; k++)
                chars += (start[k] & 0xC0) != 0x80;
            if (chars >= limit)
                return SB_NONE;
        }
        if (lit->kind == SB_LIT_NONE)
            return SB_EQUAL;
        Py_ssize_t common = len < lit->len ? len : lit->len;
        int c = common ? memcmp(start, lit->bytes, (size_t)common) : 0;
        return (char)sb_order(c != 0 ? c : (len > lit->len) - (len < lit->len));
    }
    }
    if (lit->kind == SB_LIT_NONE)
        return SB_EQUAL;
    if (lit->overflow)
        return lit->overflow > 0 ? SB_LESS : SB_GREATER;
    return (char)sb_order((v > lit->i) - (v < lit->i));
}

static int
sb_kinds_ok(const char *kinds, Py_ssize_t arity)
{
    for (Py_ssize_t i = 0; i < arity; i++)
        if (strchr("?bhiqfdDsy", kinds[i]) == NULL || kinds[i] == '\0')
            return 0;
    return 1;
}

/* The statistics tuples of a plan's files lie all over the heap: each loop over them asks
 * for the tuple 32 items on and for the rows and counts of the one 16 on. */
static inline void
stats_ahead(PyObject *stats, Py_ssize_t i, Py_ssize_t n)
{
    PyObject **items = ((PyListObject *)stats)->ob_item;
    PREFETCH(items, i, n);
#if defined(__GNUC__) || defined(__clang__)
    if (i + 16 < n && PyTuple_CheckExact(items[i + 16]) && PyTuple_GET_SIZE(items[i + 16]) == 4) {
        __builtin_prefetch(PyTuple_GET_ITEM(items[i + 16], 0));
        __builtin_prefetch(PyTuple_GET_ITEM(items[i + 16], 1));
        __builtin_prefetch(PyTuple_GET_ITEM(items[i + 16], 2));
    }
#endif
}

/* A literal as `sb_code` compares it with a column of `kind` (checked by `sb_kinds_ok`): an int
 * for '?bhiqD' (bools as 0/1, dates as days), a float for 'fd', UTF-8 bytes for 'sy', None for
 * none; 0, or -1 with a TypeError naming `who`. */
static int
sb_literal_of(PyObject *literal, char kind, const char *who, sb_literal *lit)
{
    *lit = (sb_literal){SB_LIT_NONE, 0, 0, 0.0, NULL, 0};
    if (literal == Py_None)
        return 0;
    int wanted = strchr("fd", kind) ? SB_LIT_FLOAT : strchr("sy", kind) ? SB_LIT_BYTES : SB_LIT_INT;
    if (wanted == SB_LIT_INT && PyLong_Check(literal)) {
        lit->i = PyLong_AsLongLongAndOverflow(literal, &lit->overflow);
        if (lit->i == -1 && PyErr_Occurred())
            return -1;
    }
    else if (wanted == SB_LIT_FLOAT && PyFloat_Check(literal))
        lit->f = PyFloat_AS_DOUBLE(literal);
    else if (wanted == SB_LIT_BYTES && PyBytes_Check(literal)) {
        lit->bytes = (const unsigned char *)PyBytes_AS_STRING(literal);
        lit->len = PyBytes_GET_SIZE(literal);
    }
    else {
        PyErr_Format(PyExc_TypeError, "%s: a %s literal for kind %c", who, Py_TYPE(literal)->tp_name, kind);
        return -1;
    }
    lit->kind = wanted;
    return 0;
}

/* A statistics element's bound rows (`rows`, NULL where it has none) and -1, or the one code
 * of all its answers: SB_UNUSABLE, SB_OTHER, SB_PYTHON (`stats_bounds`). */
static char
sb_rows_of(PyObject *item, PyObject *names, const char *kinds, Py_ssize_t arity, PyObject **rows)
{
    rows[0] = rows[1] = NULL;
    if (item == Py_None)
        return SB_UNUSABLE;
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4)
        return SB_PYTHON;
    if (PyTuple_GET_ITEM(item, 3) != names)
        return SB_OTHER;
    PyObject *nulls = PyTuple_GET_ITEM(item, 2);
    if (nulls != Py_None && !PyTuple_Check(nulls))
        return SB_PYTHON;
    if (nulls != Py_None && PyTuple_GET_SIZE(nulls) != arity)
        return SB_UNUSABLE;
    for (int r = 0; r < 2; r++) {
        PyObject *row = PyTuple_GET_ITEM(item, r);
        if (row == Py_None || (PyBytes_CheckExact(row) && PyBytes_GET_SIZE(row) == 0))
            continue;                                       /* no bounds (`if minimum`) */
        if (!PyBytes_CheckExact(row))
            return SB_PYTHON;
        if (!sb_row_ok((const unsigned char *)PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row), kinds, arity))
            return SB_UNUSABLE;
        rows[r] = row;
    }
    return -1;
}

/* `stats_bounds` of its `count` literals. */
static PyObject *
sb_bounds(PyObject *stats, PyObject *names, const char *kinds, Py_ssize_t arity, Py_ssize_t field,
          PyObject *const *literals, Py_ssize_t count, Py_ssize_t limit)
{
    if (!sb_kinds_ok(kinds, arity) || field < 0 || field >= arity) {
        PyErr_SetString(PyExc_ValueError, "stats_bounds: bad kinds or field");
        return NULL;
    }
    sb_literal *lits = PyMem_Malloc(sizeof(sb_literal) * (size_t)(count > 0 ? count : 1));
    if (lits == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t j = 0; j < count; j++) {
        if (sb_literal_of(literals[j], kinds[field], "stats_bounds", &lits[j]) < 0) {
            PyMem_Free(lits);
            return NULL;
        }
    }
    Py_ssize_t n = PyList_GET_SIZE(stats);
    PyObject *result = PyBytes_FromStringAndSize(NULL, 2 * n * count);
    if (result == NULL) {
        PyMem_Free(lits);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        stats_ahead(stats, i, n);
        PyObject *rows[2];
        char code = sb_rows_of(PyList_GET_ITEM(stats, i), names, kinds, arity, rows);
        for (Py_ssize_t j = 0; j < count; j++) {
            char *at = out + 2 * (j * n + i);
            for (int r = 0; r < 2; r++)
                at[r] = code >= 0 ? code : rows[r] == NULL ? SB_NONE
                    : sb_code((const unsigned char *)PyBytes_AS_STRING(rows[r]), PyBytes_GET_SIZE(rows[r]),
                              kinds, arity, field, &lits[j], r == 1 ? limit : 0);
        }
    }
    PyMem_Free(lits);
    return result;
}

PyDoc_STRVAR(stats_bounds_doc,
"stats_bounds(stats: list, names: object, kinds: bytes, field: int,\n"
"             literals: tuple[int | float | bytes | None, ...], limit: int, /) -> bytes\n\n"
"Two codes per element of `stats` (`DataFile.value_stats`: (min row, max row, null counts,\n"
"stats column names) or None) and literal, for its minimum's and maximum's field `field`\n"
"against the literal: 0, 1, 2 the value is below, equal to, above it (1 for a present value\n"
"when the literal is None); 3 no bound (NULL, NaN, or, when `limit` > 0, a maximum string of\n"
"`limit` code points or more, bytes of `limit` bytes or more); both 4: the statistics are\n"
"unusable (None, null counts of another arity, a row that does not decode as `kinds`, a\n"
"`binary_row` kind letter per column); both 5: its names are not `names` (identity); both 6:\n"
"only Python reads it (not a 4-tuple, a row that is not bytes). Literals: int for '?bhiqD'\n"
"(bools as 0/1, dates as days), float for 'fd', UTF-8 bytes for 'sy'. The codes of literal j\n"
"for every element, then those of literal j + 1 (2 * len(stats) bytes a literal): each file's\n"
"statistics are reached and checked once for all of an IN list's values (they lie all over\n"
"the heap: a 100k-file plan's pass costs ~15 ms).");

static PyObject *
stats_bounds(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *stats, *names, *literals;
    const char *kinds;
    Py_ssize_t arity, field, limit;
    if (!PyArg_ParseTuple(args, "O!Oy#nO!n:stats_bounds", &PyList_Type, &stats, &names, &kinds,
                          &arity, &field, &PyTuple_Type, &literals, &limit))
        return NULL;
    return sb_bounds(stats, names, kinds, arity, field, PySequence_Fast_ITEMS(literals),
                     PyTuple_GET_SIZE(literals), limit);
}

PyDoc_STRVAR(stats_nulls_doc,
"stats_nulls(stats: list, field: int, /) -> bytes\n\n"
"The null count of field `field` of each element of `stats` (as `stats_bounds` takes them),\n"
"native int64s; the least int64 where it is unknown (no statistics, no null counts, None).");

static PyObject *
stats_nulls(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *stats;
    Py_ssize_t field;
    if (!PyArg_ParseTuple(args, "O!n:stats_nulls", &PyList_Type, &stats, &field))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(stats);
    PyObject *result = PyBytes_FromStringAndSize(NULL, 8 * n);
    if (result == NULL)
        return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        stats_ahead(stats, i, n);
        PyObject *item = PyList_GET_ITEM(stats, i), *nulls, *count;
        out[i] = INT64_MIN;
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4)
            continue;
        nulls = PyTuple_GET_ITEM(item, 2);
        if (!PyTuple_Check(nulls) || field < 0 || field >= PyTuple_GET_SIZE(nulls))
            continue;
        count = PyTuple_GET_ITEM(nulls, field);
        if (PyLong_Check(count)) {
            int overflow;
            long long value = PyLong_AsLongLongAndOverflow(count, &overflow);
            if (value == -1 && PyErr_Occurred()) {
                Py_DECREF(result);
                return NULL;
            }
            if (!overflow && value != INT64_MIN)
                out[i] = value;
        }
    }
    return result;
}

/* partition_judge: what `bulk_partitions.partition_verdicts` answers of one partition row, for
 * the manifest decoder's gate (`avro.pick`): an entry of a partition the filter excludes is
 * walked over, not built. Judged per distinct partition as its entries are met, so one call
 * must cost far less than the decode it saves: the numpy form is ~50 us a call. The program
 * is `bulk_partitions.judge_program`'s tree of tuples. */

enum { PJ_FALSE, PJ_TRUE, PJ_MAYBE, PJ_UNDECIDED };
enum { PJ_AND, PJ_OR, PJ_CONSTANT, PJ_COMPARE, PJ_NULL, PJ_IN, PJ_BETWEEN };

/* Field `field` of the checked row against `value`: an SB_ code, -1 with an error. */
static int
pj_code(const unsigned char *d, Py_ssize_t size, const char *kinds, Py_ssize_t arity,
        Py_ssize_t field, PyObject *value)
{
    sb_literal lit;
    if (sb_literal_of(value, kinds[field], "partition_judge", &lit) < 0)
        return -1;
    return sb_code(d, size, kinds, arity, field, &lit, 0);
}

static int
pj_eval(PyObject *node, const unsigned char *d, Py_ssize_t size, const char *kinds, Py_ssize_t arity)
{
    Py_ssize_t n = PyTuple_Check(node) ? PyTuple_GET_SIZE(node) : 0;
    long op = n > 0 ? PyLong_AsLong(PyTuple_GET_ITEM(node, 0)) : -1;
    if (op == -1 && PyErr_Occurred())
        return -1;
    if (op == PJ_AND || op == PJ_OR) {          /* `deciding` wins, then any MAYBE */
        int deciding = op == PJ_AND ? PJ_FALSE : PJ_TRUE, out = op == PJ_AND ? PJ_TRUE : PJ_FALSE;
        for (Py_ssize_t i = 1; i < n; i++) {
            int child = pj_eval(PyTuple_GET_ITEM(node, i), d, size, kinds, arity);
            if (child < 0)
                return -1;
            if (child == deciding)
                return deciding;
            if (child == PJ_MAYBE)
                out = PJ_MAYBE;
        }
        return out;
    }
    if (op == PJ_CONSTANT && n == 2)
        return (int)PyLong_AsLong(PyTuple_GET_ITEM(node, 1));
    Py_ssize_t field = n >= 3 ? PyLong_AsSsize_t(PyTuple_GET_ITEM(node, 1)) : -1;
    if (field < 0 || field >= arity) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "partition_judge: a malformed program");
        return -1;
    }
    int null = sb_null(d, field);
    if (op == PJ_NULL)                          /* (field, 1: is_null / 0: is_not_null) */
        return null == PyObject_IsTrue(PyTuple_GET_ITEM(node, 2)) ? PJ_TRUE : PJ_FALSE;
    if (null)
        return PJ_FALSE;
    if (op == PJ_COMPARE && n == 4) {           /* (field, comparison, literal) */
        long how = PyLong_AsLong(PyTuple_GET_ITEM(node, 2));
        int c = pj_code(d, size, kinds, arity, field, PyTuple_GET_ITEM(node, 3));
        if (c < 0)
            return -1;
        int held = how == 0 ? c == SB_EQUAL : how == 1 ? c != SB_EQUAL : how == 2 ? c == SB_LESS
                 : how == 3 ? c != SB_GREATER : how == 4 ? c == SB_GREATER : c != SB_LESS;
        return held ? PJ_TRUE : PJ_FALSE;
    }
    if (op == PJ_IN && n == 4 && PyTuple_Check(PyTuple_GET_ITEM(node, 3))) {
        int negated = PyObject_IsTrue(PyTuple_GET_ITEM(node, 2)), hit = 0;
        PyObject *values = PyTuple_GET_ITEM(node, 3);    /* (field, not_in?, literals) */
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(values) && !hit; i++) {
            int c = pj_code(d, size, kinds, arity, field, PyTuple_GET_ITEM(values, i));
            if (c < 0)
                return -1;
            hit = c == SB_EQUAL;
        }
        return hit != negated ? PJ_TRUE : PJ_FALSE;
    }
    if (op == PJ_BETWEEN && n == 4) {           /* (field, low, high) */
        int low = pj_code(d, size, kinds, arity, field, PyTuple_GET_ITEM(node, 2));
        int high = low < 0 ? -1 : pj_code(d, size, kinds, arity, field, PyTuple_GET_ITEM(node, 3));
        if (high < 0)
            return -1;
        return low != SB_LESS && high != SB_GREATER ? PJ_TRUE : PJ_FALSE;
    }
    PyErr_SetString(PyExc_ValueError, "partition_judge: a malformed program");
    return -1;
}

PyDoc_STRVAR(partition_judge_doc,
"partition_judge(kinds: bytes, program: tuple, row: object, /) -> int\n\n"
"`bulk_partitions.partition_verdicts`' code of one partition row (a BinaryRow of the columns'\n"
"`kinds`, `binary_row.row_kinds` letters but 'y') under `program`\n"
"(`bulk_partitions.judge_program`; literals as `stats_bounds` takes them): 0 False, 1 True,\n"
"2 None, 3 undecided (not bytes, or a row that does not decode as `kinds`: Python judges it).");

static PyObject *
partition_judge(PyObject *Py_UNUSED(module), PyObject *args)
{
    const char *kinds;
    Py_ssize_t arity;
    PyObject *program, *row;
    if (!PyArg_ParseTuple(args, "y#O!O:partition_judge", &kinds, &arity, &PyTuple_Type, &program, &row))
        return NULL;
    if (arity == 0 || !sb_kinds_ok(kinds, arity) || memchr(kinds, 'y', (size_t)arity) != NULL) {
        PyErr_SetString(PyExc_ValueError, "partition_judge: bad kinds");
        return NULL;
    }
    if (!PyBytes_CheckExact(row) || PyBytes_GET_SIZE(row) == 0
            || !sb_row_ok((const unsigned char *)PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row), kinds, arity))
        return PyLong_FromLong(PJ_UNDECIDED);
    int code = pj_eval(program, (const unsigned char *)PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row),
                       kinds, arity);
    return code < 0 ? NULL : PyLong_FromLong(code);
}

/* ---------------------------------------------------------------------------------------- */
/* read_pass, attributes: a plan's passes over a snapshot's data files. A 100k-file
 * snapshot's `DataFile`s lie scattered in memory, and each pass over them cost ~20 ms of a warm
 * plan, in Python or in C alike (the cost is reaching each object): `read_pass` reads in one
 * pass what `plan.read_files` checks and what pruning needs, the runs of files sharing a
 * partition (`merge._pruned` then takes each run's verdict once and leaves the files of
 * skipped runs unread); `attributes` reads several attributes of each object at once. */

/* Where `name` lies in instances of `type` when it is an object slot read the generic way
 * (a member descriptor, no custom `__getattribute__`): its offset, else -1. Reading the slot
 * there costs a load; `PyObject_GetAttr` looked the name up each time (~50 ns a value, most
 * of a plan's passes over its files' attributes). */
static Py_ssize_t
object_slot(PyTypeObject *type, PyObject *name)
{
    if (type->tp_getattro != PyObject_GenericGetAttr || !PyUnicode_CheckExact(name))
        return -1;
    PyObject *descr = _PyType_Lookup(type, name);
    if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type)
        return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    return member->type == T_OBJECT_EX ? member->offset : -1;
}

/* `object.name`, read from its slot at `offset` (>= 0) where set: a new reference. */
static inline PyObject *
slot_or_attribute(PyObject *object, PyObject *name, Py_ssize_t offset)
{
    if (offset >= 0) {
        PyObject *value = *(PyObject **)((char *)object + offset);
        if (value != NULL)
            return Py_NewRef(value);
    }
    return PyObject_GetAttr(object, name);
}

static PyObject *rp_names[5];           /* the attribute names, interned on first use */
enum { RP_BUCKET, RP_WRITE_COLS, RP_FIRST_ROW_ID, RP_PARTITION, RP_ROW_COUNT };

PyDoc_STRVAR(read_pass_doc,
"read_pass(files: tuple, postpone_bucket: int, names: tuple[str, ...] = (), /) -> tuple\n\n"
"(postponed, split, row_ids, starts, partitions, rows, columns): whether a file is in the\n"
"bucket `postpone_bucket`; whether a file has write columns (truthy) and a first_row_id;\n"
"whether a file has a first_row_id; for each run of consecutive files sharing a `partition`\n"
"object, its first index, that object and the sum of its files' row counts; for each of\n"
"`names`, the list of that attribute of every file (`attributes`, in the same pass).");

static PyObject *
read_pass(PyObject *Py_UNUSED(module), PyObject *args)
{
    static const char *names[5] = {"bucket", "write_cols", "first_row_id", "partition", "row_count"};
    PyObject *files, *wanted = NULL;
    long postpone;
    if (!PyArg_ParseTuple(args, "O!l|O!:read_pass", &PyTuple_Type, &files, &postpone,
                          &PyTuple_Type, &wanted))
        return NULL;
    for (int i = 0; i < 5; i++)
        if (rp_names[i] == NULL && (rp_names[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return NULL;
    enum { MOST = 32 };
    Py_ssize_t k = wanted == NULL ? 0 : PyTuple_GET_SIZE(wanted), offsets[MOST];
    if (k > MOST)
        return PyErr_Format(PyExc_ValueError, "read_pass: at most %d names", (int)MOST);
    for (Py_ssize_t j = 0; j < k; j++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(wanted, j)))
            return PyErr_Format(PyExc_TypeError, "read_pass: names are str");
    PyObject *columns = PyTuple_New(k);
    if (columns == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *column = PyList_New(PyTuple_GET_SIZE(files));
        if (column == NULL) {
            Py_DECREF(columns);
            return NULL;
        }
        PyTuple_SET_ITEM(columns, j, column);
    }
    PyObject *starts = PyList_New(0), *partitions = PyList_New(0), *rows = PyList_New(0);
    PyObject *result = NULL, *last = NULL;
    int postponed = 0, split = 0, row_ids = 0;
    long long run_rows = 0;
    if (starts == NULL || partitions == NULL || rows == NULL)
        goto done;
    Py_ssize_t n = PyTuple_GET_SIZE(files), slot[5];
    PyTypeObject *known = NULL;             /* the type `slot` is of */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(files, i);
        if (Py_TYPE(f) != known) {
            known = Py_TYPE(f);
            for (int j = 0; j < 5; j++)
                slot[j] = object_slot(known, rp_names[j]);
            for (Py_ssize_t j = 0; j < k; j++)
                offsets[j] = object_slot(known, PyTuple_GET_ITEM(wanted, j));
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *item = slot_or_attribute(f, PyTuple_GET_ITEM(wanted, j), offsets[j]);
            if (item == NULL)
                goto done;
            PyList_SET_ITEM(PyTuple_GET_ITEM(columns, j), i, item);
        }
        PyObject *value = slot_or_attribute(f, rp_names[RP_BUCKET], slot[RP_BUCKET]);
        if (value == NULL)
            goto done;
        int overflow;
        long bucket = PyLong_AsLongAndOverflow(value, &overflow);
        Py_DECREF(value);
        if (bucket == -1 && PyErr_Occurred())
            goto done;
        postponed |= !overflow && bucket == postpone;
        if ((value = slot_or_attribute(f, rp_names[RP_FIRST_ROW_ID], slot[RP_FIRST_ROW_ID])) == NULL)
            goto done;
        int has_row_id = value != Py_None;
        Py_DECREF(value);
        row_ids |= has_row_id;
        if (has_row_id && !split) {
            if ((value = slot_or_attribute(f, rp_names[RP_WRITE_COLS], slot[RP_WRITE_COLS])) == NULL)
                goto done;
            int truthy = PyObject_IsTrue(value);
            Py_DECREF(value);
            if (truthy < 0)
                goto done;
            split = truthy;
        }
        if ((value = slot_or_attribute(f, rp_names[RP_ROW_COUNT], slot[RP_ROW_COUNT])) == NULL)
            goto done;
        long long count = PyLong_AsLongLong(value);
        Py_DECREF(value);
        if (count == -1 && PyErr_Occurred())
            goto done;
        if ((value = slot_or_attribute(f, rp_names[RP_PARTITION], slot[RP_PARTITION])) == NULL)
            goto done;
        if (value != last) {
            PyObject *start = PyLong_FromSsize_t(i), *sum = PyLong_FromLongLong(run_rows);
            int failed = start == NULL || sum == NULL || PyList_Append(starts, start) < 0
                || PyList_Append(partitions, value) < 0
                || (i > 0 && PyList_Append(rows, sum) < 0);
            Py_XDECREF(start);
            Py_XDECREF(sum);
            if (failed) {
                Py_DECREF(value);
                goto done;
            }
            run_rows = 0;
            last = value;                   /* (the list holds it) */
        }
        Py_DECREF(value);
        run_rows += count;
    }
    if (n > 0) {
        PyObject *sum = PyLong_FromLongLong(run_rows);
        if (sum == NULL || PyList_Append(rows, sum) < 0) {
            Py_XDECREF(sum);
            goto done;
        }
        Py_DECREF(sum);
    }
    result = Py_BuildValue("(OOOOOOO)", postponed ? Py_True : Py_False, split ? Py_True : Py_False,
                           row_ids ? Py_True : Py_False, starts, partitions, rows, columns);
done:
    Py_DECREF(columns);
    Py_XDECREF(starts);
    Py_XDECREF(partitions);
    Py_XDECREF(rows);
    return result;
}

PyDoc_STRVAR(attributes_doc,
"attributes(objects: list, names: tuple[str, ...], /) -> tuple[list, ...]\n\n"
"For each name, the list of that attribute of every object: one pass over objects that lie\n"
"scattered in memory (each reached once, not once per attribute).");

static PyObject *
attributes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *objects, *names;
    if (!PyArg_ParseTuple(args, "O!O!:attributes", &PyList_Type, &objects, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(objects), k = PyTuple_GET_SIZE(names);
    PyObject *result = PyTuple_New(k);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *column = PyList_New(n);
        if (column == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, j, column);
    }
    enum { MOST = 32 };
    Py_ssize_t offsets[MOST];
    PyTypeObject *known = NULL;             /* the type `offsets` are of */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *object = PyList_GET_ITEM(objects, i);
        if (Py_TYPE(object) != known && k <= MOST) {
            known = Py_TYPE(object);
            for (Py_ssize_t j = 0; j < k; j++)
                offsets[j] = object_slot(known, PyTuple_GET_ITEM(names, j));
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *value = k <= MOST ? slot_or_attribute(object, PyTuple_GET_ITEM(names, j), offsets[j])
                                        : PyObject_GetAttr(object, PyTuple_GET_ITEM(names, j));
            if (value == NULL) {
                Py_DECREF(result);
                return NULL;
            }
            PyList_SET_ITEM(PyTuple_GET_ITEM(result, j), i, value);
        }
    }
    return result;
}

/* slot_offsets, new_slotted: a plan makes a `DataFile` per live file (100k for a big table);
 * a frozen dataclass with slots sets each field through `object.__setattr__` (~20 calls, most
 * of the cost of making one), so its instances are made here, each slot stored directly. */

PyDoc_STRVAR(slot_offsets_doc,
"slot_offsets(cls: type, names: tuple[str, ...], /) -> tuple[int, ...]\n\n"
"Where each named object slot of `cls` lies in its instances, for `new_slotted`.");

static PyObject *
slot_offsets(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls;
    PyObject *names;
    if (!PyArg_ParseTuple(args, "O!O!:slot_offsets", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *result = PyTuple_New(n);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
        if (name == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyMemberDef *member = cls->tp_members;
        while (member != NULL && member->name != NULL && strcmp(member->name, name) != 0)
            member++;
        if (member == NULL || member->name == NULL || member->type != T_OBJECT_EX
                || (member->flags & READONLY)) {
            Py_DECREF(result);
            return PyErr_Format(PyExc_TypeError, "%s has no object slot %s", cls->tp_name, name);
        }
        PyObject *offset = PyLong_FromSsize_t(member->offset);
        if (offset == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, i, offset);
    }
    return result;
}

PyDoc_STRVAR(new_slotted_doc,
"new_slotted(cls: type, offsets: tuple[int, ...], values: tuple, /) -> object\n\n"
"A new instance of `cls` (not initialized) with the slot at each of `offsets`\n"
"(`slot_offsets`) set to the value at the same place in `values`.");

static PyObject *
new_slotted(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls;
    PyObject *offsets, *values;
    if (!PyArg_ParseTuple(args, "O!O!O!:new_slotted", &PyType_Type, &cls, &PyTuple_Type, &offsets,
                          &PyTuple_Type, &values))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(offsets);
    if (PyTuple_GET_SIZE(values) != n) {
        PyErr_SetString(PyExc_ValueError, "new_slotted: as many values as offsets");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(offsets, i));
        if (at == -1 && PyErr_Occurred())
            return NULL;
        if (at < (Py_ssize_t)sizeof(PyObject) || at % (Py_ssize_t)sizeof(PyObject *) != 0
                || at + (Py_ssize_t)sizeof(PyObject *) > cls->tp_basicsize) {
            PyErr_Format(PyExc_ValueError, "new_slotted: %zd is no slot of %s", at, cls->tp_name);
            return NULL;
        }
    }
    PyObject *object = cls->tp_alloc(cls, 0);
    if (object == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **slot = (PyObject **)((char *)object
                                        + PyLong_AsSsize_t(PyTuple_GET_ITEM(offsets, i)));
        PyObject *old = *slot;
        *slot = Py_NewRef(PyTuple_GET_ITEM(values, i));
        Py_XDECREF(old);
    }
    return object;
}

/* untrack: a plan decodes a big table's manifests into ~100k tuples of numbers, strings and
 * bytes while the collector is paused; its next pass walks every one of them once (to find
 * them atomic and untrack them: ~40 ms). Untracked here, while they are still in cache, the
 * pass skips them. */

/* Whether `tuple` holds no tracked object once its nested tuples are untracked (it is then
 * untracked too): CPython's own rule for tuples, applied ahead of the collector. */
static int
untrack_tuple(PyObject *tuple, int depth)
{
    if (!PyObject_GC_IsTracked(tuple))
        return 1;
    if (depth > 8)
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (PyTuple_CheckExact(item) ? !untrack_tuple(item, depth + 1)
                                     : PyObject_IS_GC(item) && PyObject_GC_IsTracked(item))
            return 0;
    }
    PyObject_GC_UnTrack(tuple);
    return 1;
}

PyDoc_STRVAR(untrack_doc,
"untrack(objects: list, /) -> None\n\n"
"The tuples of `objects` (and the tuples they nest) that hold no other container, untracked\n"
"by the garbage collector now, as its next pass would.");

static PyObject *
untrack(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *objects;
    if (!PyArg_ParseTuple(args, "O!:untrack", &PyList_Type, &objects))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(objects, i);
        if (PyTuple_CheckExact(item))
            untrack_tuple(item, 0);
    }
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------- */
/* fold_into, live_files, read_sorted, slotted_rows: a cold plan's fold of a big snapshot's
 * manifests and the objects it makes, without a Python statement per entry or per file. A
 * 100k-file table's cold plan folded ~33k entries (a dict step each), made ~23k `DataFile`s
 * (a tuple of 21 values built field by field, the path joined, the statistics' tuples shared)
 * and, after pruning, ~6k `FileTask`s: about 200 ms in Python, a tenth of it here. Each kernel
 * declines what it does not expect to Python (`slow`, the callers' own code), so the errors
 * and the unusual entries are the Python path's. */

#if defined(__GNUC__) || defined(__clang__)
#define PLAN_PREFETCH(p) __builtin_prefetch(p)
#else
#define PLAN_PREFETCH(p) ((void)0)
#endif

/* A fold reads ~33k entries whose tuples and values lie all over the heap (decoded one
 * manifest block at a time among other objects): each loop asks ahead for the tuple it will
 * read 8 steps on, and for the items of the one 4 steps on (its pointers arrived by then). */
static inline void
prefetch_ahead(PyObject *list, Py_ssize_t i, const Py_ssize_t *order, Py_ssize_t n)
{
    if (i + 8 < n)
        PLAN_PREFETCH(PyList_GET_ITEM(list, order == NULL ? i + 8 : order[i + 8]));
    if (i + 4 < n) {
        PyObject *ahead = PyList_GET_ITEM(list, order == NULL ? i + 4 : order[i + 4]);
        if (PyTuple_CheckExact(ahead))
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ahead); j++)
                PLAN_PREFETCH(PyTuple_GET_ITEM(ahead, j));
    }
}

PyDoc_STRVAR(fold_into_doc,
"fold_into(live: dict, manifest: int, kinds: list, keys: list, verdicts: dict | None, /)\n"
"    -> tuple[int, tuple | None]\n\n"
"`manifests._fold`'s step over one manifest's entries, into `live` ({fold key: the entry's\n"
"position `manifest << 32 | index`, or None for a DELETE folded before its ADD}); with\n"
"`verdicts` ({partition BinaryRow: bool}, every entry's partition in it), only the entries of\n"
"partitions it keeps. (the excluded count: +1 per ADD dropped, -1 per other entry dropped;\n"
"None, or the (kind, key) of the first entry that is an ADD of a key already folded, added or\n"
"deleted, or of another kind).");

static PyObject *
fold_into(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *live, *kinds, *keys, *verdicts;
    long long manifest;
    if (!PyArg_ParseTuple(args, "O!LO!O!O:fold_into", &PyDict_Type, &live, &manifest, &PyList_Type,
                          &kinds, &PyList_Type, &keys, &verdicts))
        return NULL;
    if (verdicts != Py_None && !PyDict_Check(verdicts))
        return PyErr_Format(PyExc_TypeError, "fold_into: verdicts must be a dict or None");
    Py_ssize_t n = PyList_GET_SIZE(kinds);
    if (PyList_GET_SIZE(keys) != n || manifest < 0 || manifest > INT32_MAX || n > UINT32_MAX)
        return PyErr_Format(PyExc_ValueError, "fold_into: as many kinds as keys, fewer than 2**32");
    long long excluded = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyList_GET_SIZE(kinds) != n || PyList_GET_SIZE(keys) != n)
            return PyErr_Format(PyExc_RuntimeError, "fold_into: the entries changed meanwhile");
        prefetch_ahead(keys, i, NULL, n);
        PyObject *kind = PyList_GET_ITEM(kinds, i), *key = PyList_GET_ITEM(keys, i);
        long k = PyLong_CheckExact(kind) ? PyLong_AsLong(kind) : -1;
        if (k == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (verdicts != Py_None) {
            if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) < 1)
                return PyErr_Format(PyExc_TypeError, "fold_into: a fold key is a tuple");
            PyObject *verdict = PyDict_GetItemWithError(verdicts, PyTuple_GET_ITEM(key, 0));
            if (verdict == NULL)
                return PyErr_Occurred() ? NULL
                    : PyErr_Format(PyExc_KeyError, "fold_into: a partition without a verdict");
            int keep = PyObject_IsTrue(verdict);
            if (keep < 0)
                return NULL;
            if (!keep) {
                excluded += k == 0 ? 1 : -1;
                continue;
            }
        }
        if (k != 0 && k != 1)
            return Py_BuildValue("(L(OO))", excluded, kind, key);
        PyObject *held = PyDict_GetItemWithError(live, key);
        if (held == NULL && PyErr_Occurred())
            return NULL;
        int present = held != NULL && held != Py_None;
        if (k == 0) {
            if (held != NULL)           /* added, or deleted before: Java refuses it too */
                return Py_BuildValue("(L(OO))", excluded, kind, key);
            PyObject *at = PyLong_FromLongLong((manifest << 32) | (long long)i);
            if (at == NULL || PyDict_SetItem(live, key, at) < 0) {
                Py_XDECREF(at);
                return NULL;
            }
            Py_DECREF(at);
        } else if (present ? PyDict_DelItem(live, key) < 0 : PyDict_SetItem(live, key, Py_None) < 0) {
            return NULL;
        }
    }
    return Py_BuildValue("(LO)", excluded, Py_None);
}

/* The slot offsets of a class (`slot_offsets`' tuple) into `at`, each checked as
 * `new_slotted` checks it: 0, or -1 with an error set. */
static int
checked_offsets(PyTypeObject *cls, PyObject *offsets, Py_ssize_t *at, Py_ssize_t n)
{
    if (PyTuple_GET_SIZE(offsets) != n) {
        PyErr_Format(PyExc_ValueError, "%zd slot offsets expected", n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        at[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(offsets, i));
        if (at[i] == -1 && PyErr_Occurred())
            return -1;
        if (at[i] < (Py_ssize_t)sizeof(PyObject) || at[i] % (Py_ssize_t)sizeof(PyObject *) != 0
                || at[i] + (Py_ssize_t)sizeof(PyObject *) > cls->tp_basicsize) {
            PyErr_Format(PyExc_ValueError, "%zd is no slot of %s", at[i], cls->tp_name);
            return -1;
        }
    }
    return 0;
}

/* A new instance of `cls` with the slots at `at` set to `values` (new references, stolen;
 * on failure released). */
static PyObject *
slotted_from(PyTypeObject *cls, const Py_ssize_t *at, PyObject **values, Py_ssize_t n)
{
    PyObject *object = cls->tp_alloc(cls, 0);
    if (object == NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_DECREF(values[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **slot = (PyObject **)((char *)object + at[i]);
        PyObject *old = *slot;
        *slot = values[i];
        Py_XDECREF(old);
    }
    return object;
}

enum { DF_FIELDS = 21, ROW_FIELDS = 22 };

/* `directory + "/" + name` (two str), one allocation: PyUnicode_FromFormat parses its
 * format each call, and was a sixth of making a file. */
static PyObject *
joined_path(PyObject *directory, PyObject *name)
{
    Py_ssize_t a = PyUnicode_GET_LENGTH(directory), b = PyUnicode_GET_LENGTH(name);
    Py_UCS4 widest = PyUnicode_MAX_CHAR_VALUE(directory);
    if (PyUnicode_MAX_CHAR_VALUE(name) > widest)
        widest = PyUnicode_MAX_CHAR_VALUE(name);
    PyObject *path = PyUnicode_New(a + 1 + b, widest);
    if (path == NULL)
        return NULL;
    if (PyUnicode_KIND(path) == PyUnicode_1BYTE_KIND) {
        Py_UCS1 *out = PyUnicode_1BYTE_DATA(path);
        memcpy(out, PyUnicode_1BYTE_DATA(directory), (size_t)a);
        out[a] = '/';
        memcpy(out + a + 1, PyUnicode_1BYTE_DATA(name), (size_t)b);
        return path;
    }
    if (PyUnicode_CopyCharacters(path, 0, directory, 0, a) < 0
            || PyUnicode_WriteChar(path, a, '/') < 0
            || PyUnicode_CopyCharacters(path, a + 1, name, 0, b) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    return path;
}

/* The statistics' tuples (null counts, column names) of the last file made and their
 * `known` copies (held): a manifest's files share one object of each (`pick`'s shared slots),
 * so most files find theirs here, not by hashing it into `known`. */
typedef struct {
    PyObject *seen[2], *kept[2];
} RecentStats;

static void
recent_stats_clear(RecentStats *recent)
{
    for (int j = 0; j < 2; j++) {
        Py_CLEAR(recent->seen[j]);
        Py_CLEAR(recent->kept[j]);
    }
}

/* One `DataFile` from a manifest row (`manifests._ENTRY_FIELDS`), as `Manifests._data_file`
 * makes it, `place` its (partition, partition path, bucket directory): a new reference, NULL
 * with an error set, or NULL without one where the row is not the usual (Python makes it). */
static PyObject *
data_file_of(PyTypeObject *cls, const Py_ssize_t *at, PyObject *row, PyObject *extra,
             PyObject *place, PyObject *known, PyObject *indexes, PyObject *minus_one,
             RecentStats *recent)
{
    PyObject *name = PyTuple_GET_ITEM(row, 4), *external = PyTuple_GET_ITEM(row, 13);
    PyObject *write_cols = PyTuple_GET_ITEM(row, 17), *low = PyTuple_GET_ITEM(row, 18);
    PyObject *high = PyTuple_GET_ITEM(row, 19), *nulls = PyTuple_GET_ITEM(row, 20);
    PyObject *names = PyTuple_GET_ITEM(row, 21);
    static const int required[] = {1, 2, 5, 6, 7, 8, 9, 10};
    for (size_t j = 0; j < sizeof(required) / sizeof(required[0]); j++)
        if (PyTuple_GET_ITEM(row, required[j]) == Py_None)
            return NULL;
    if (!PyUnicode_CheckExact(name) || !(external == Py_None || PyUnicode_CheckExact(external))
            || !(write_cols == Py_None || PyTuple_CheckExact(write_cols) || PyList_CheckExact(write_cols))
            || !(low == Py_None || PyBytes_CheckExact(low)) || !(high == Py_None || PyBytes_CheckExact(high))
            || !(nulls == Py_None || PyTuple_CheckExact(nulls) || PyList_CheckExact(nulls))
            || !(names == Py_None || PyTuple_CheckExact(names) || PyList_CheckExact(names))
            || !PyTuple_CheckExact(place) || PyTuple_GET_SIZE(place) != 3
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(place, 2)))
        return NULL;
    PyObject *values[DF_FIELDS];
    Py_ssize_t made = 0;
    PyObject *path;
    if (external != Py_None && PyUnicode_GET_LENGTH(external) > 0) {
        path = Py_NewRef(external);
    } else {
        path = joined_path(PyTuple_GET_ITEM(place, 2), name);
        if (path == NULL)
            return NULL;
    }
    PyObject *cols = write_cols == Py_None ? Py_NewRef(Py_None) : PySequence_Tuple(write_cols);
    PyObject *stats = NULL;
    if (cols == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    if (low == Py_None && high == Py_None && nulls == Py_None) {
        stats = Py_NewRef(Py_None);
    } else {
        PyObject *parts[2] = {nulls, names}, *kept[2] = {NULL, NULL};
        for (int j = 0; j < 2; j++) {
            if (parts[j] == Py_None) {
                kept[j] = Py_NewRef(Py_None);
                continue;
            }
            if (parts[j] == recent->seen[j]) {
                kept[j] = Py_NewRef(recent->kept[j]);
                continue;
            }
            PyObject *tuple = PySequence_Tuple(parts[j]);
            PyObject *held = tuple == NULL ? NULL : PyDict_SetDefault(known, tuple, tuple);
            Py_XDECREF(tuple);
            if (held == NULL) {
                Py_XDECREF(kept[0]);
                Py_DECREF(path);
                Py_DECREF(cols);
                return NULL;
            }
            kept[j] = Py_NewRef(held);
            if (PyTuple_CheckExact(parts[j])) {     /* (immutable: the same values next time) */
                Py_XSETREF(recent->seen[j], Py_NewRef(parts[j]));
                Py_XSETREF(recent->kept[j], Py_NewRef(held));
            }
        }
        PyObject *empty = PyBytes_FromStringAndSize(NULL, 0);
        stats = empty == NULL ? NULL
            : PyTuple_Pack(4, low == Py_None || PyBytes_GET_SIZE(low) == 0 ? empty : low,
                           high == Py_None || PyBytes_GET_SIZE(high) == 0 ? empty : high,
                           kept[0], kept[1]);
        Py_XDECREF(empty);
        Py_DECREF(kept[0]);
        Py_DECREF(kept[1]);
        if (stats == NULL) {
            Py_DECREF(path);
            Py_DECREF(cols);
            return NULL;
        }
        untrack_tuple(stats, 0);        /* (bytes and tuples of numbers and str) */
    }
    if (PyTuple_CheckExact(cols))
        untrack_tuple(cols, 0);
    PyObject *total = PyTuple_GET_ITEM(row, 3);
    values[made++] = Py_NewRef(PyTuple_GET_ITEM(place, 0));
    values[made++] = Py_NewRef(PyTuple_GET_ITEM(place, 1));
    values[made++] = Py_NewRef(PyTuple_GET_ITEM(row, 2));
    values[made++] = Py_NewRef(total == Py_None ? minus_one : total);
    values[made++] = Py_NewRef(name);
    values[made++] = path;
    for (int j = 5; j <= 10; j++)       /* file size .. max sequence number */
        values[made++] = Py_NewRef(PyTuple_GET_ITEM(row, j));
    values[made++] = Py_NewRef(extra);
    /* one copy of each embedded index (a table's files share a few: pruning's answers,
     * kept by the container's bytes, then find them by identity) */
    PyObject *embedded = PyTuple_GET_ITEM(row, 12);
    if (PyBytes_CheckExact(embedded)) {
        PyObject *held = PyDict_SetDefault(indexes, embedded, embedded);
        if (held == NULL) {
            for (Py_ssize_t j = 0; j < made; j++)
                Py_DECREF(values[j]);
            Py_DECREF(cols);
            Py_DECREF(stats);
            return NULL;
        }
        embedded = held;
    }
    values[made++] = Py_NewRef(embedded);
    for (int j = 13; j <= 16; j++)      /* external path .. first row id */
        values[made++] = Py_NewRef(PyTuple_GET_ITEM(row, j));
    values[made++] = cols;
    values[made++] = Py_NewRef(Py_None);
    values[made++] = stats;
    PyObject *file = slotted_from(cls, at, values, made);
    /* Untracked by the collector: a file refers to no object that could refer back to it
     * (values, its partition's dict, tuples), so refcounting frees it, and the collector's
     * passes need not walk a big table's ~100k files (a cold plan's end: ~10 ms for 23k). */
    if (file != NULL && PyObject_IS_GC(file))
        PyObject_GC_UnTrack(file);
    return file;
}

/* Ask for the row at a live position (`items`: for its values, whose pointers arrived). */
static inline void
prefetch_row(PyObject *decoded, Py_ssize_t manifests, long long code, int items)
{
    Py_ssize_t m = (Py_ssize_t)(code >> 32), i = (Py_ssize_t)(code & 0xffffffffLL);
    if (m < 0 || m >= manifests)
        return;
    PyObject *rows = PyTuple_GET_ITEM(PyList_GET_ITEM(decoded, m), 0);
    if (i >= PyList_GET_SIZE(rows))
        return;
    PyObject *row = PyList_GET_ITEM(rows, i);
    if (!items) {
        PLAN_PREFETCH(row);
    } else if (PyTuple_CheckExact(row)) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(row); j++)
            PLAN_PREFETCH(PyTuple_GET_ITEM(row, j));
    }
}

PyDoc_STRVAR(live_files_doc,
"live_files(live: dict, decoded: list, known: dict, place: Callable, slow: Callable,\n"
"           cls: type, offsets: tuple[int, ...], /) -> list\n\n"
"The `DataFile` of each live position in `live` (`fold_into`'s, None skipped), in order:\n"
"`decoded[manifest]` is (rows, files, keys, shared) of the manifest, a file made once (kept in\n"
"`files`, its row then dropped from `rows`) with `shared`'s (partition BinaryRow, bucket)\n"
"place, else `place(shared, partition, bucket)`'s; `slow(manifest, index)` makes the file of a\n"
"row this does not expect (missing values, other types: the Python path and its errors).\n"
"The statistics' tuples (null counts, column names) are one copy each, `known`'s, and so\n"
"are the files' embedded indexes within the call.");

static PyObject *
live_files(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *live, *decoded, *known, *place, *slow, *offsets;
    PyTypeObject *cls;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!O!:live_files", &PyDict_Type, &live, &PyList_Type, &decoded,
                          &PyDict_Type, &known, &place, &slow, &PyType_Type, &cls, &PyTuple_Type, &offsets))
        return NULL;
    Py_ssize_t at[DF_FIELDS];
    if (checked_offsets(cls, offsets, at, DF_FIELDS) < 0)
        return NULL;
    Py_ssize_t manifests = PyList_GET_SIZE(decoded);
    for (Py_ssize_t m = 0; m < manifests; m++) {
        PyObject *parts = PyList_GET_ITEM(decoded, m);
        if (!PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 4
                || !PyList_Check(PyTuple_GET_ITEM(parts, 0)) || !PyList_Check(PyTuple_GET_ITEM(parts, 1))
                || !PyList_Check(PyTuple_GET_ITEM(parts, 2)) || !PyDict_Check(PyTuple_GET_ITEM(parts, 3)))
            return PyErr_Format(PyExc_TypeError, "live_files: decoded is (rows, files, keys, shared)");
    }
    PyObject *out = PyList_New(0), *minus_one = PyLong_FromLong(-1), *indexes = PyDict_New();
    PyObject *last_row = NULL, *last_bucket = NULL, *last_place = NULL, *last_shared = NULL;
    RecentStats recent = {{NULL, NULL}, {NULL, NULL}};
    long long *codes = NULL;                /* the live positions, in order */
    if (out == NULL || minus_one == NULL || indexes == NULL)
        goto fail;
    Py_ssize_t pos = 0, count = 0;
    PyObject *key, *value;
    codes = PyMem_Malloc(sizeof(long long) * (size_t)(PyDict_GET_SIZE(live) + 1));
    if (codes == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    while (PyDict_Next(live, &pos, &key, &value)) {
        if (value == Py_None)
            continue;
        if ((codes[count++] = PyLong_AsLongLong(value)) == -1 && PyErr_Occurred())
            goto fail;
    }
    for (Py_ssize_t c = 0; c < count; c++) {
        if (c + 8 < count)                  /* (see `prefetch_ahead`) */
            prefetch_row(decoded, manifests, codes[c + 8], 0);
        if (c + 4 < count)
            prefetch_row(decoded, manifests, codes[c + 4], 1);
        long long code = codes[c];
        Py_ssize_t m = (Py_ssize_t)(code >> 32), i = (Py_ssize_t)(code & 0xffffffffLL);
        if (m < 0 || m >= manifests) {
            PyErr_SetString(PyExc_IndexError, "live_files: no such manifest");
            goto fail;
        }
        PyObject *parts = PyList_GET_ITEM(decoded, m);
        PyObject *rows = PyTuple_GET_ITEM(parts, 0), *files = PyTuple_GET_ITEM(parts, 1);
        PyObject *keys = PyTuple_GET_ITEM(parts, 2), *shared = PyTuple_GET_ITEM(parts, 3);
        if (i >= PyList_GET_SIZE(rows) || i >= PyList_GET_SIZE(files) || i >= PyList_GET_SIZE(keys)) {
            PyErr_SetString(PyExc_IndexError, "live_files: no such entry");
            goto fail;
        }
        PyObject *made = PyList_GET_ITEM(files, i);
        if (made != Py_None) {
            if (PyList_Append(out, made) < 0)
                goto fail;
            continue;
        }
        PyObject *row = PyList_GET_ITEM(rows, i), *entry_key = PyList_GET_ITEM(keys, i);
        PyObject *file = NULL;
        if (PyTuple_CheckExact(row) && PyTuple_GET_SIZE(row) == ROW_FIELDS
                && PyTuple_Check(entry_key) && PyTuple_GET_SIZE(entry_key) >= 5
                && PyBytes_CheckExact(PyTuple_GET_ITEM(row, 1))
                && PyLong_CheckExact(PyTuple_GET_ITEM(row, 2))) {
            PyObject *partition = PyTuple_GET_ITEM(row, 1), *bucket = PyTuple_GET_ITEM(row, 2);
            PyObject *found;
            if (shared == last_shared && partition == last_row
                    && PyObject_RichCompareBool(bucket, last_bucket, Py_EQ) == 1) {
                found = Py_NewRef(last_place);
            } else {
                PyObject *pair = PyTuple_Pack(2, partition, bucket);
                if (pair == NULL)
                    goto fail;
                found = PyDict_GetItemWithError(shared, pair);
                Py_DECREF(pair);
                if (found == NULL && PyErr_Occurred())
                    goto fail;
                found = found != NULL ? Py_NewRef(found)
                    : PyObject_CallFunctionObjArgs(place, shared, partition, bucket, NULL);
                if (found == NULL)
                    goto fail;
                Py_XSETREF(last_place, Py_NewRef(found));
                Py_XSETREF(last_row, Py_NewRef(partition));
                Py_XSETREF(last_bucket, Py_NewRef(bucket));
                last_shared = shared;
            }
            file = data_file_of(cls, at, row, PyTuple_GET_ITEM(entry_key, 4), found, known, indexes,
                                minus_one, &recent);
            Py_DECREF(found);
            if (file == NULL && PyErr_Occurred())
                goto fail;
        }
        if (file == NULL) {
            file = PyObject_CallFunction(slow, "nn", m, i);
            if (file == NULL)
                goto fail;
        } else if (PyList_SetItem(files, i, Py_NewRef(file)) < 0
                   || PyList_SetItem(rows, i, Py_NewRef(Py_None)) < 0) {
            Py_DECREF(file);
            goto fail;
        }
        int failed = PyList_Append(out, file);
        Py_DECREF(file);
        if (failed < 0)
            goto fail;
    }
    Py_DECREF(minus_one);
    Py_DECREF(indexes);
    Py_XDECREF(last_row);
    Py_XDECREF(last_bucket);
    Py_XDECREF(last_place);
    recent_stats_clear(&recent);
    PyMem_Free(codes);
    return out;
fail:
    recent_stats_clear(&recent);
    PyMem_Free(codes);
    Py_XDECREF(out);
    Py_XDECREF(minus_one);
    Py_XDECREF(indexes);
    Py_XDECREF(last_row);
    Py_XDECREF(last_bucket);
    Py_XDECREF(last_place);
    return NULL;
}

/* One file's `plan.read_order` key, read once for the sort. */
typedef struct {
    PyObject *path, *name;
    long long bucket, row_id, level, sequence;
    Py_ssize_t at;
} ReadKey;

static int
read_key_compare(const void *a, const void *b)
{
    const ReadKey *x = a, *y = b;
    if (x->path != y->path) {
        int c = PyUnicode_Compare(x->path, y->path);
        if (c != 0)
            return c;
    }
#define CMP(field) if (x->field != y->field) return x->field < y->field ? -1 : 1
    CMP(bucket);
    CMP(row_id);
    CMP(level);                         /* highest first: `level` holds -level */
    CMP(sequence);
#undef CMP
    if (x->name != y->name) {
        int c = PyUnicode_Compare(x->name, y->name);
        if (c != 0)
            return c;
    }
    return x->at < y->at ? -1 : x->at > y->at;
}

/* An attribute (`slot_or_attribute`) that is an int within 64 bits (*value), 1 when it is
 * not, -1 on error. */
static int
int64_attribute(PyObject *object, PyObject *name, Py_ssize_t offset, int none_is_zero, long long *value)
{
    PyObject *item = slot_or_attribute(object, name, offset);
    if (item == NULL)
        return -1;
    int declined = 0;
    if (item == Py_None && none_is_zero) {
        *value = 0;
    } else if (!PyLong_CheckExact(item)) {
        declined = 1;
    } else {
        int overflow;
        *value = PyLong_AsLongLongAndOverflow(item, &overflow);
        declined = overflow != 0;
    }
    Py_DECREF(item);
    return declined;
}

static PyObject *ro_names[6];           /* the attribute names, interned on first use */

PyDoc_STRVAR(read_sorted_doc,
"read_sorted(files: tuple, /) -> tuple | None\n\n"
"`tuple(sorted(files, key=plan.read_order))`: each key read once and compared in C (a cold\n"
"plan's ~23k files sorted by key tuples cost ~15 ms), None where a key is not of str and\n"
"64-bit ints (the caller sorts it in Python).");

PyDoc_STRVAR(read_positions_doc,
"read_positions(files: tuple, /) -> list[int] | None\n\n"
"The positions of `files` in `read_sorted`'s order (ties in their order): a plan sorts the\n"
"files it keeps, with what it knows of each; None where `read_sorted` declines.");

/* `read_sorted`'s sort: the sorted tuple, or with `positions` the list of positions. */
static PyObject *
read_sort(PyObject *files, int positions)
{
    static const char *names[6] = {"partition_path", "bucket", "first_row_id", "level",
                                   "min_sequence_number", "file_name"};
    for (int j = 0; j < 6; j++)
        if (ro_names[j] == NULL && (ro_names[j] = PyUnicode_InternFromString(names[j])) == NULL)
            return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(files);
    ReadKey *keys = PyMem_Malloc(sizeof(ReadKey) * (size_t)(n > 0 ? n : 1));
    if (keys == NULL)
        return PyErr_NoMemory();
    PyObject *out = NULL;
    int declined = 0;
    Py_ssize_t held = 0;                /* the keys whose path and name are referenced */
    Py_ssize_t slot[6];
    PyTypeObject *known = NULL;             /* the type `slot` is of */
    for (Py_ssize_t i = 0; i < n && !declined; i++) {
        PyObject *f = PyTuple_GET_ITEM(files, i);
        ReadKey *k = &keys[i];
        k->at = i;
        if (Py_TYPE(f) != known) {
            known = Py_TYPE(f);
            for (int j = 0; j < 6; j++)
                slot[j] = object_slot(known, ro_names[j]);
        }
        int got;
        if ((got = int64_attribute(f, ro_names[1], slot[1], 0, &k->bucket)) != 0
                || (got = int64_attribute(f, ro_names[2], slot[2], 1, &k->row_id)) != 0
                || (got = int64_attribute(f, ro_names[3], slot[3], 0, &k->level)) != 0
                || (got = int64_attribute(f, ro_names[4], slot[4], 0, &k->sequence)) != 0) {
            if (got < 0)
                goto done;
            declined = 1;
            break;
        }
        if (k->level == LLONG_MIN) {
            declined = 1;
            break;
        }
        k->level = -k->level;
        k->path = slot_or_attribute(f, ro_names[0], slot[0]);
        k->name = k->path == NULL ? NULL : slot_or_attribute(f, ro_names[5], slot[5]);
        if (k->name == NULL) {
            Py_XDECREF(k->path);
            goto done;
        }
        held = i + 1;
        if (!PyUnicode_CheckExact(k->path) || !PyUnicode_CheckExact(k->name)) {
            declined = 1;
            break;
        }
    }
    if (declined) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    qsort(keys, (size_t)n, sizeof(ReadKey), read_key_compare);
    if ((out = positions ? PyList_New(n) : PyTuple_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!positions) {
            PyTuple_SET_ITEM(out, i, Py_NewRef(PyTuple_GET_ITEM(files, keys[i].at)));
            continue;
        }
        PyObject *at = PyLong_FromSsize_t(keys[i].at);
        if (at == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, at);
    }
done:
    for (Py_ssize_t i = 0; i < held; i++) {
        Py_DECREF(keys[i].path);
        Py_DECREF(keys[i].name);
    }
    PyMem_Free(keys);
    return out;
}

static PyObject *
read_sorted(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *files;
    if (!PyArg_ParseTuple(args, "O!:read_sorted", &PyTuple_Type, &files))
        return NULL;
    return read_sort(files, 0);
}

static PyObject *
read_positions(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *files;
    if (!PyArg_ParseTuple(args, "O!:read_positions", &PyTuple_Type, &files))
        return NULL;
    return read_sort(files, 1);
}

PyDoc_STRVAR(slotted_rows_doc,
"slotted_rows(cls: type, offsets: tuple[int, ...], columns: tuple[list, ...], /) -> list\n\n"
"`new_slotted(cls, offsets, row)` for each row of `columns` (one list per slot, all of one\n"
"length): a plan's `FileTask`s made at once, untracked by the collector (for objects that\n"
"no value of theirs refers back to: refcounting frees them).");

static PyObject *
slotted_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls;
    PyObject *offsets, *columns;
    if (!PyArg_ParseTuple(args, "O!O!O!:slotted_rows", &PyType_Type, &cls, &PyTuple_Type, &offsets,
                          &PyTuple_Type, &columns))
        return NULL;
    enum { MOST = 64 };
    Py_ssize_t k = PyTuple_GET_SIZE(columns), at[MOST];
    if (k > MOST)
        return PyErr_Format(PyExc_ValueError, "slotted_rows: at most %d slots", (int)MOST);
    if (checked_offsets(cls, offsets, at, k) < 0)
        return NULL;
    Py_ssize_t n = k == 0 ? 0 : -1;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *column = PyTuple_GET_ITEM(columns, j);
        if (!PyList_Check(column) || (n >= 0 && PyList_GET_SIZE(column) != n))
            return PyErr_Format(PyExc_ValueError, "slotted_rows: columns are lists of one length");
        n = PyList_GET_SIZE(column);
    }
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *values[MOST];
        for (Py_ssize_t j = 0; j < k; j++)
            values[j] = Py_NewRef(PyList_GET_ITEM(PyTuple_GET_ITEM(columns, j), i));
        PyObject *object = slotted_from(cls, at, values, k);
        if (object == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        if (PyObject_IS_GC(object))
            PyObject_GC_UnTrack(object);
        PyList_SET_ITEM(out, i, object);
    }
    return out;
}

PyDoc_STRVAR(untrack_containers_doc,
"untrack_containers(containers: tuple, /) -> None\n\n"
"Each list, tuple or dict of `containers` untracked by the garbage collector, whatever it\n"
"holds: for the big containers a plan keeps (a manifest's entry lists, a snapshot's files)\n"
"that hold numbers, strings and untracked objects, none of which refers back to them.");

/* A cold plan keeps a decoded manifest's lists (kinds, fold keys, rows, files: ~33k items
 * each over a 100k-file table's manifests) and the snapshot's files in the cache, all made
 * while the collector is paused; the first collection after the pause walked every item of
 * them (~10-20 ms, a cache miss each) to find them all untracked. An untracked container is
 * never freed by the collector, only by refcounting: what it holds must not refer back. */
static PyObject *
untrack_containers(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *containers;
    if (!PyArg_ParseTuple(args, "O!:untrack_containers", &PyTuple_Type, &containers))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(containers);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(containers, i);
        if (!PyList_Check(item) && !PyTuple_Check(item) && !PyDict_Check(item))
            return PyErr_Format(PyExc_TypeError, "untrack_containers: a %s is no list, tuple or dict",
                                Py_TYPE(item)->tp_name);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(containers, i);
        if (PyObject_GC_IsTracked(item))
            PyObject_GC_UnTrack(item);
    }
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------- */
/* bloom_add */

/* Thomas Wang's 64-bit mix (`FastHash` of numeric columns): wrapping, `>>` arithmetic. */
static inline uint64_t
wang64(uint64_t k)
{
    k = ~k + (k << 21);
    k ^= (uint64_t)((int64_t)k >> 24);
    k = k + (k << 3) + (k << 8);
    k ^= (uint64_t)((int64_t)k >> 14);
    k = k + (k << 2) + (k << 4);
    k ^= (uint64_t)((int64_t)k >> 28);
    k = k + (k << 31);
    return k;
}

/* Values per block: 16 KiB of positions stay in the L1 cache. */
#define BLOCK 2048

/* A block's bit positions for hash function i: (h1 + i*h2 as int32, complemented if negative)
 * % divisor. The quotient of the dividend a (below 2**31) is estimated in doubles, a times
 * `reciprocal` (1.0 / divisor) truncated: both operands are exact and the product is within a
 * few units of 2**-52 of a / divisor (below 2**31), so the estimate is the quotient or one off
 * it, and the remainder is fixed by one step each way in 64-bit integers. That vectorizes
 * with no 64x64-bit multiply: about half the time of Lemire's fastmod, which needs one. */
static inline void
block_positions(const int32_t *h1, const int32_t *h2, Py_ssize_t size, uint32_t i, double reciprocal,
                uint32_t divisor, uint32_t *positions)
{
    for (Py_ssize_t j = 0; j < size; j++) {
        int32_t combined = (int32_t)((uint32_t)h1[j] + i * (uint32_t)h2[j]);     /* Java's int */
        int32_t dividend = combined >= 0 ? combined : ~combined;
        uint32_t quotient = (uint32_t)(int32_t)((double)dividend * reciprocal);
        int64_t rest = (int64_t)dividend - (int64_t)((uint64_t)quotient * divisor);
        rest += (int64_t)divisor & (rest >> 63);                    /* one too many */
        rest -= rest >= (int64_t)divisor ? (int64_t)divisor : 0;    /* one too few */
        positions[j] = (uint32_t)rest;
    }
}

/* Hashes recently added, by their low bits: a value whose hash is there sets only bits already
 * set (the positions depend on the hash alone), so it is skipped. Columns repeat values
 * (sorted, clustered, skewed or low-cardinality ones): without this, a run of one value
 * writes the same k bytes over and over, each write waiting for the last one. */
#define RECENT_BITS 12

/* A bit set being filled: where its bits are, k, numBits and its reciprocal, and the
 * hashes recently added (see RECENT_BITS). Filled a block of hashes at a time (`add_block`),
 * from an int64 buffer (`add_all`) or straight from a column's items (`bloom_add_items`). */
typedef struct {
    uint8_t *bits;
    uint32_t k, divisor;
    double reciprocal;
    uint64_t recent[1 << RECENT_BITS];
} bloom_t;

static void
bloom_start(bloom_t *bloom, uint8_t *bits, uint32_t k, uint32_t divisor)
{
    bloom->bits = bits;
    bloom->k = k;
    bloom->divisor = divisor;
    bloom->reciprocal = 1.0 / divisor;
    for (uint64_t slot = 0; slot < ((uint64_t)1 << RECENT_BITS); slot++)
        bloom->recent[slot] = slot ^ 1;          /* no hash that maps to the slot */
}

/* Compiled also for AVX-512 and AVX2, the best chosen at load time (GCC's target_clones, on
 * x86-64 glibc): the portable SSE2 build takes a third longer. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define BEST_TARGET __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define BEST_TARGET
#endif

/* One block of at most BLOCK hashes into the bit set: the hashes not added recently, then per
 * hash function their positions (vectorized) and their bits (random writes, which cannot be). */
BEST_TARGET
static void
add_block(bloom_t *bloom, const uint64_t *hashes, Py_ssize_t size)
{
    int32_t h1[BLOCK], h2[BLOCK];
    uint32_t positions[BLOCK];
    const uint64_t mask = ((uint64_t)1 << RECENT_BITS) - 1;
    Py_ssize_t fresh = 0;
    for (Py_ssize_t j = 0; j < size; j++) {
        uint64_t hash = hashes[j];
        uint64_t *seen = &bloom->recent[hash & mask];
        h1[fresh] = (int32_t)(uint32_t)hash;
        h2[fresh] = (int32_t)(uint32_t)(hash >> 32);
        fresh += *seen != hash;
        *seen = hash;
    }
    uint8_t *bits = bloom->bits;
    for (uint32_t i = 1; i <= bloom->k; i++) {
        block_positions(h1, h2, fresh, i, bloom->reciprocal, bloom->divisor, positions);
        for (Py_ssize_t j = 0; j < fresh; j++)
            bits[positions[j] >> 3] |= (uint8_t)(1u << (positions[j] & 7));
    }
}

/* Every value of an int64 buffer into the bit set, a block at a time: mixed first (`mix`,
 * vectorized) or already hashes. */
BEST_TARGET
static void
add_all(bloom_t *bloom, const unsigned char *data, Py_ssize_t count, int mix)
{
    uint64_t hashes[BLOCK];
    for (Py_ssize_t base = 0; base < count; base += BLOCK) {
        Py_ssize_t size = count - base < BLOCK ? count - base : BLOCK;
        memcpy(hashes, data + 8 * base, (size_t)size * 8);
        if (mix)
            for (Py_ssize_t j = 0; j < size; j++)       /* vectorized */
                hashes[j] = wang64(hashes[j]);
        add_block(bloom, hashes, size);
    }
}

/* The bit set's size checked as `bloom_add` and `bloom_add_items` take it: 0, or -1 with a
 * ValueError. */
static int
check_bits(const Py_buffer *bitset, int k, long long num_bits)
{
    if (num_bits <= 0 || num_bits >= ((long long)1 << 32) || bitset->len * 8 < num_bits) {
        PyErr_Format(PyExc_ValueError, "num_bits %lld does not fit the bit set of %zd bytes",
                     num_bits, bitset->len);
        return -1;
    }
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "k must not be negative");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(bloom_add_doc,
"bloom_add(bitset: writable buffer, values: buffer of int64, mix: bool, k: int, num_bits: int)\n\n"
"`BloomFilter64.addHash` for every value, into the packed bit set: int64 keys mixed with Thomas\n"
"Wang's hash (`mix`), or values already hashed; bit (h1 + i*h2 as int32, complemented if\n"
"negative) % num_bits for i in 1..k, with h1, h2 the low and high halves of the hash.");

static PyObject *
bloom_add(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer bitset, values;
    int mix, k;
    long long num_bits;
    if (!PyArg_ParseTuple(args, "w*y*piL:bloom_add", &bitset, &values, &mix, &k, &num_bits))
        return NULL;
    PyObject *result = NULL;
    if (check_bits(&bitset, k, num_bits) < 0)
        goto done;
    if (values.len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "values must be int64");
        goto done;
    }
    bloom_t *bloom = PyMem_RawMalloc(sizeof(bloom_t));
    if (bloom == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    bloom_start(bloom, bitset.buf, (uint32_t)k, (uint32_t)num_bits);
    add_all(bloom, values.buf, values.len / 8, mix);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(bloom);
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bitset);
    PyBuffer_Release(&values);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* group_rows */

#define GOLDEN 0x9E3779B97F4A7C15ull
#define FIRST_BITS 10

typedef struct {
    uint64_t key;
    int32_t code;       /* -1: empty */
} key_slot_t;

/* Places `count` known keys into a fresh table of 2**bits slots. */
static key_slot_t *
key_table(const uint64_t *distinct, Py_ssize_t count, int bits)
{
    size_t size = (size_t)1 << bits, mask = size - 1;
    key_slot_t *slots = PyMem_RawMalloc(size * sizeof(key_slot_t));
    if (slots == NULL)
        return NULL;
    for (size_t i = 0; i < size; i++)
        slots[i].code = -1;
    for (Py_ssize_t known = 0; known < count; known++) {
        size_t at = (size_t)((distinct[known] * GOLDEN) >> (64 - bits));
        while (slots[at].code >= 0)
            at = (at + 1) & mask;
        slots[at].key = distinct[known];
        slots[at].code = (int32_t)known;
    }
    return slots;
}

/* Each row's code (keys numbered by first occurrence) into `codes`, each code's key and count:
 * the number of codes, -1 past `limit`, -2 without memory. The table starts small and doubles
 * at half load, so that a thousand keys probe a few kilobytes, not the largest table. A row
 * whose key is the previous row's takes its code without a probe (sorted and clustered
 * columns: most rows). */
static Py_ssize_t
number_keys(const uint64_t *keys, Py_ssize_t rows, Py_ssize_t limit, int32_t *codes,
            uint64_t *distinct, int64_t *counts)
{
    int bits = FIRST_BITS;
    size_t mask = ((size_t)1 << bits) - 1;
    key_slot_t *slots = key_table(distinct, 0, bits);
    if (slots == NULL)
        return -2;
    Py_ssize_t found = 0;
    uint64_t previous = 0;
    int32_t previous_code = -1;
    for (Py_ssize_t i = 0; i < rows; i++) {
        uint64_t key = keys[i];
        if (key == previous && previous_code >= 0) {
            codes[i] = previous_code;
            counts[previous_code]++;
            continue;
        }
        size_t at = (size_t)((key * GOLDEN) >> (64 - bits));
        int32_t code;
        for (;;) {
            code = slots[at].code;
            if (code < 0) {
                if (found == limit) {
                    PyMem_RawFree(slots);
                    return -1;
                }
                code = (int32_t)found;
                slots[at].key = key;
                slots[at].code = code;
                distinct[found] = key;
                counts[found] = 0;
                found++;
                if ((size_t)found * 2 > mask + 1) {      /* half full: double */
                    PyMem_RawFree(slots);
                    bits++;
                    mask = ((size_t)1 << bits) - 1;
                    slots = key_table(distinct, found, bits);
                    if (slots == NULL)
                        return -2;
                }
                break;
            }
            if (slots[at].key == key)
                break;
            at = (at + 1) & mask;
        }
        codes[i] = previous_code = code;
        previous = key;
        counts[code]++;
    }
    PyMem_RawFree(slots);
    return found;
}

PyDoc_STRVAR(group_rows_doc,
"group_rows(keys: buffer of uint64, rows: buffer of int64 | None, limit: int, grouped: writable\n"
"           buffer of uint32) -> tuple[bytearray, bytearray, bytearray, bytearray] | None\n\n"
"The rows (ascending; None: row i is i) grouped by their keys into `grouped` (one uint32 per\n"
"row), groups in order of first occurrence, rows ascending in each: each group's key (uint64),\n"
"start and count (int64) and whether it holds two adjacent rows (a bool byte); None when\n"
"there are more than `limit` distinct keys.");

static PyObject *
group_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer keys, rows = {0}, grouped;
    PyObject *rows_object;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*Onw*:group_rows", &keys, &rows_object, &limit, &grouped))
        return NULL;
    PyObject *result = NULL, *distinct = NULL, *starts = NULL, *counts = NULL, *runs = NULL;
    int32_t *codes = NULL;
    int64_t *last = NULL;
    Py_ssize_t count = keys.len / 8;
    int every_row = rows_object == Py_None;
    if (!every_row && PyObject_GetBuffer(rows_object, &rows, PyBUF_SIMPLE) < 0)
        goto done;
    if (keys.len % 8 != 0 || grouped.len != count * 4 || (!every_row && rows.len != count * 8)
            || limit < 0 || limit > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "group_rows: keys, rows and grouped must have one item per row");
        goto done;
    }
    Py_ssize_t room = limit < count ? limit : count;
    distinct = PyByteArray_FromStringAndSize(NULL, room * 8);
    counts = PyByteArray_FromStringAndSize(NULL, room * 8);
    codes = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(int32_t));
    if (distinct == NULL || counts == NULL || codes == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    uint64_t *distinct_data = (uint64_t *)PyByteArray_AS_STRING(distinct);
    int64_t *count_data = (int64_t *)PyByteArray_AS_STRING(counts);
    Py_ssize_t found;
    Py_BEGIN_ALLOW_THREADS
    found = number_keys(keys.buf, count, limit, codes, distinct_data, count_data);
    Py_END_ALLOW_THREADS
    if (found == -2) {
        PyErr_NoMemory();
        goto done;
    }
    if (found == -1) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    starts = PyByteArray_FromStringAndSize(NULL, found * 8);
    runs = PyByteArray_FromStringAndSize(NULL, found);
    last = PyMem_RawMalloc((size_t)(found ? found : 1) * 2 * sizeof(int64_t));
    if (starts == NULL || runs == NULL || last == NULL
            || PyByteArray_Resize(distinct, found * 8) < 0 || PyByteArray_Resize(counts, found * 8) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    count_data = (int64_t *)PyByteArray_AS_STRING(counts);
    int64_t *start_data = (int64_t *)PyByteArray_AS_STRING(starts);
    char *run_data = PyByteArray_AS_STRING(runs);
    Py_BEGIN_ALLOW_THREADS
    /* a counting sort's second pass: each code's cursor and last row */
    int64_t *cursor = last + found, total = 0;
    for (Py_ssize_t code = 0; code < found; code++) {
        start_data[code] = cursor[code] = total;
        total += count_data[code];
        last[code] = -2;
        run_data[code] = 0;
    }
    uint32_t *out = grouped.buf;
    const int64_t *row_data = rows.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t code = codes[i];
        int64_t row = every_row ? i : row_data[i];
        if (row == last[code] + 1)
            run_data[code] = 1;
        last[code] = row;
        out[cursor[code]++] = (uint32_t)row;
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OOOO)", distinct, starts, counts, runs);
done:
    PyMem_RawFree(codes);
    PyMem_RawFree(last);
    Py_XDECREF(distinct);
    Py_XDECREF(starts);
    Py_XDECREF(counts);
    Py_XDECREF(runs);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&grouped);
    if (!every_row && rows.obj != NULL)
        PyBuffer_Release(&rows);
    return result;
}

PyDoc_STRVAR(number_rows_doc,
"number_rows(keys: buffer of uint64, limit: int) -> tuple[bytearray, bytearray] | None\n\n"
"Each row's code (native int32), the keys numbered in order of first occurrence, and each\n"
"code's key (uint64): `group_rows`' hash table without the grouping (a range-bitmap's codes);\n"
"None when there are more than `limit` distinct keys.");

static PyObject *
number_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer keys;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*n:number_rows", &keys, &limit))
        return NULL;
    PyObject *result = NULL, *codes = NULL, *distinct = NULL;
    int64_t *counts = NULL;
    Py_ssize_t count = keys.len / 8;
    if (keys.len % 8 != 0 || limit < 0 || limit > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "number_rows: uint64 keys and a limit in 0..2**31 - 1");
        goto done;
    }
    Py_ssize_t room = limit < count ? limit : count;
    codes = PyByteArray_FromStringAndSize(NULL, count * 4);
    distinct = PyByteArray_FromStringAndSize(NULL, room * 8);
    counts = PyMem_RawMalloc((size_t)(room ? room : 1) * sizeof(int64_t));
    if (codes == NULL || distinct == NULL || counts == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t found;
    Py_BEGIN_ALLOW_THREADS
    found = number_keys(keys.buf, count, limit, (int32_t *)PyByteArray_AS_STRING(codes),
                        (uint64_t *)PyByteArray_AS_STRING(distinct), counts);
    Py_END_ALLOW_THREADS
    if (found == -2)
        PyErr_NoMemory();
    else if (found == -1)
        result = Py_NewRef(Py_None);
    else if (PyByteArray_Resize(distinct, found * 8) == 0)
        result = Py_BuildValue("(OO)", codes, distinct);
done:
    PyMem_RawFree(counts);
    Py_XDECREF(codes);
    Py_XDECREF(distinct);
    PyBuffer_Release(&keys);
    return result;
}

/* pack_rows, split_packed: a column with many distinct keys is grouped by sorting
 * `key - least << b | row` (numpy's SIMD sort of one uint64 array); building that array and
 * splitting the sorted one into groups took a dozen numpy passes over the rows (the sign flip,
 * the extremes, the shifts and masks, the boundaries, each group's adjacent rows: ~60 ms for a
 * million rows over 100k keys, most of a sorted INT column's build). These do it in two passes
 * each. */

PyDoc_STRVAR(pack_rows_doc,
"pack_rows(keys: buffer of uint64, rows: buffer of int64 | None, flip: int, row_bits: int)\n"
"    -> tuple[bytearray, int] | None\n\n"
"Each row's `(key ^ flip) - least << row_bits | row` (uint64; rows None: row i is i) and the\n"
"least `key ^ flip`; None where the keys' span and the rows do not fit 64 bits together.");

static PyObject *
pack_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer keys, rows = {0};
    PyObject *rows_object;
    unsigned long long flip;
    int row_bits;
    if (!PyArg_ParseTuple(args, "y*OKi:pack_rows", &keys, &rows_object, &flip, &row_bits))
        return NULL;
    PyObject *result = NULL, *packed = NULL;
    Py_ssize_t count = keys.len / 8;
    int every_row = rows_object == Py_None;
    if (!every_row && PyObject_GetBuffer(rows_object, &rows, PyBUF_SIMPLE) < 0)
        goto done;
    if (keys.len % 8 != 0 || (!every_row && rows.len != count * 8) || row_bits < 1 || row_bits > 63) {
        PyErr_SetString(PyExc_ValueError, "pack_rows: one int64 row per uint64 key, row_bits in 1..63");
        goto done;
    }
    const uint64_t *key_data = keys.buf;
    const int64_t *row_data = rows.buf;
    uint64_t least = UINT64_MAX, most = 0;
    int rows_fit = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t key = key_data[i] ^ flip;
        least = key < least ? key : least;
        most = key > most ? key : most;
    }
    if (!every_row)
        for (Py_ssize_t i = 0; i < count; i++)
            rows_fit &= (uint64_t)row_data[i] >> row_bits == 0;
    Py_END_ALLOW_THREADS
    if (!rows_fit || (every_row && count > 0 && (uint64_t)(count - 1) >> row_bits != 0)) {
        PyErr_SetString(PyExc_ValueError, "pack_rows: a row does not fit row_bits");
        goto done;
    }
    if (count > 0 && (most - least) >> (64 - row_bits) != 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    packed = PyByteArray_FromStringAndSize(NULL, count * 8);
    if (packed == NULL)
        goto done;
    uint64_t *out = (uint64_t *)PyByteArray_AS_STRING(packed);
    Py_BEGIN_ALLOW_THREADS
    if (every_row)
        for (Py_ssize_t i = 0; i < count; i++)
            out[i] = ((key_data[i] ^ flip) - least) << row_bits | (uint64_t)i;
    else
        for (Py_ssize_t i = 0; i < count; i++)
            out[i] = ((key_data[i] ^ flip) - least) << row_bits | (uint64_t)row_data[i];
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OK)", packed, count ? (unsigned long long)least : 0ULL);
done:
    Py_XDECREF(packed);
    PyBuffer_Release(&keys);
    if (!every_row && rows.obj != NULL)
        PyBuffer_Release(&rows);
    return result;
}

PyDoc_STRVAR(split_packed_doc,
"split_packed(packed: buffer of uint64, row_bits: int, grouped: writable buffer of uint32)\n"
"    -> tuple[bytearray, bytearray, bytearray, bytearray]\n\n"
"Strictly ascending `key << row_bits | row` split into groups: each one's rows into `grouped`\n"
"(one uint32 per item) and each group's key (uint64), start and count (int64) and whether it\n"
"holds two adjacent rows (a bool byte), as `group_rows` gives them.");

static PyObject *
split_packed(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer packed, grouped;
    int row_bits;
    if (!PyArg_ParseTuple(args, "y*iw*:split_packed", &packed, &row_bits, &grouped))
        return NULL;
    PyObject *result = NULL, *keys = NULL, *starts = NULL, *counts = NULL, *runs = NULL;
    Py_ssize_t count = packed.len / 8, groups = 0, descent = -1;
    if (packed.len % 8 != 0 || grouped.len != count * 4 || row_bits < 1 || row_bits > 32) {
        PyErr_SetString(PyExc_ValueError, "split_packed: uint64 items, one uint32 each in grouped, row_bits in 1..32");
        goto done;
    }
    const uint64_t *data = packed.buf;
    uint32_t *out = grouped.buf;
    const uint64_t mask = ((uint64_t)1 << row_bits) - 1;
    Py_BEGIN_ALLOW_THREADS
    if (count > 0) {
        out[0] = (uint32_t)(data[0] & mask);
        groups = 1;
    }
    for (Py_ssize_t i = 1; i < count; i++) {
        out[i] = (uint32_t)(data[i] & mask);
        groups += (data[i] >> row_bits) != (data[i - 1] >> row_bits);
        if (data[i] <= data[i - 1] && descent < 0)
            descent = i;
    }
    Py_END_ALLOW_THREADS
    if (descent >= 0) {
        PyErr_Format(PyExc_ValueError, "split_packed: item %zd is not above the one before", descent);
        goto done;
    }
    keys = PyByteArray_FromStringAndSize(NULL, groups * 8);
    starts = PyByteArray_FromStringAndSize(NULL, groups * 8);
    counts = PyByteArray_FromStringAndSize(NULL, groups * 8);
    runs = PyByteArray_FromStringAndSize(NULL, groups);
    if (keys == NULL || starts == NULL || counts == NULL || runs == NULL)
        goto done;
    uint64_t *key_data = (uint64_t *)PyByteArray_AS_STRING(keys);
    int64_t *start_data = (int64_t *)PyByteArray_AS_STRING(starts);
    int64_t *count_data = (int64_t *)PyByteArray_AS_STRING(counts);
    char *run_data = PyByteArray_AS_STRING(runs);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t g = -1;
    uint64_t key = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t next = data[i] >> row_bits;
        if (g < 0 || next != key) {
            if (g >= 0)
                count_data[g] = i - start_data[g];
            g++;
            key = key_data[g] = next;
            start_data[g] = i;
            run_data[g] = 0;
        }
        else
            run_data[g] |= out[i] == out[i - 1] + 1;
    }
    if (g >= 0)
        count_data[g] = count - start_data[g];
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OOOO)", keys, starts, counts, runs);
done:
    Py_XDECREF(keys);
    Py_XDECREF(starts);
    Py_XDECREF(counts);
    Py_XDECREF(runs);
    PyBuffer_Release(&packed);
    PyBuffer_Release(&grouped);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* serialize_groups: the portable RoaringBitmap format, as CRoaring and Java write it after
 * runOptimize. A container holds the rows of one high 16 bits: an array of its low halves
 * (at most 4096), else a bitset of 8 KiB; runOptimize makes it a run container when that is
 * strictly smaller (2 + 4 * runs bytes against 2 * cardinality, or 8192). */

#define COOKIE_NO_RUNS 12346
#define COOKIE 12347
#define NO_OFFSET_THRESHOLD 4
#define ARRAY_MAX 4096
#define BITSET_BYTES 8192

enum { ARRAY, BITSET, RUN };

typedef struct {
    uint32_t first;         /* index of its first row */
    uint32_t card;
    uint32_t runs;
    uint16_t key;
    uint8_t type;
} container_t;

static inline void
put16(unsigned char *out, uint32_t value)
{
    out[0] = (unsigned char)value;
    out[1] = (unsigned char)(value >> 8);
}

static inline void
put32(unsigned char *out, uint32_t value)
{
    put16(out, value & 0xFFFF);
    put16(out + 2, value >> 16);
}

static inline size_t
container_size(const container_t *c)
{
    return c->type == RUN ? 2 + 4 * (size_t)c->runs : c->type == BITSET ? BITSET_BYTES : 2 * (size_t)c->card;
}

/* The containers of ascending `rows` into `containers` (room for one per row, at most 65536);
 * returns how many, and sets whether any is a run container; NOT_ASCENDING (before writing
 * past the containers of ascending rows) where the rows are not strictly ascending. */
#define NOT_ASCENDING SIZE_MAX

static size_t
containers_of(const uint32_t *rows, uint32_t count, container_t *containers, int *has_runs)
{
    size_t n = 0;
    *has_runs = 0;
    for (uint32_t i = 0; i < count;) {
        if (i > 0 && rows[i] <= rows[i - 1])
            return NOT_ASCENDING;
        container_t *c = &containers[n++];
        uint32_t high = rows[i] >> 16, runs = 1, j = i + 1, descents = 0;
        for (; j < count && rows[j] >> 16 == high; j++) {
            runs += rows[j] != rows[j - 1] + 1;
            descents += rows[j] <= rows[j - 1];
        }
        if (descents)
            return NOT_ASCENDING;
        c->first = i;
        c->card = j - i;
        c->runs = runs;
        c->key = (uint16_t)high;
        c->type = c->card <= ARRAY_MAX ? ARRAY : BITSET;
        if (2 + 4 * (size_t)runs < (c->type == ARRAY ? 2 * (size_t)c->card : BITSET_BYTES))
            c->type = RUN;
        *has_runs |= c->type == RUN;
        i = j;
    }
    return n;
}

static size_t
header_size(size_t n, int has_runs)
{
    if (!has_runs)
        return 8 + 8 * n;
    return 4 + (n + 7) / 8 + 4 * n + (n >= NO_OFFSET_THRESHOLD ? 4 * n : 0);
}

/* A bitmap's header (cookie, run flags, keys and cardinalities, offsets) into `out`; returns
 * where its containers start. */
static unsigned char *
write_header(const container_t *containers, size_t n, int has_runs, unsigned char *out)
{
    unsigned char *at = out;
    if (has_runs) {
        put32(at, COOKIE | (uint32_t)((n - 1) << 16));
        at += 4;
        memset(at, 0, (n + 7) / 8);
        for (size_t i = 0; i < n; i++)
            if (containers[i].type == RUN)
                at[i / 8] |= (unsigned char)(1u << (i % 8));
        at += (n + 7) / 8;
    }
    else {
        put32(at, COOKIE_NO_RUNS);
        put32(at + 4, (uint32_t)n);
        at += 8;
    }
    for (size_t i = 0; i < n; i++, at += 4) {
        put16(at, containers[i].key);
        put16(at + 2, containers[i].card - 1);
    }
    if (!has_runs || n >= NO_OFFSET_THRESHOLD) {
        size_t offset = header_size(n, has_runs);
        for (size_t i = 0; i < n; i++, at += 4) {
            put32(at, (uint32_t)offset);
            offset += container_size(&containers[i]);
        }
    }
    return at;
}

/* One bitmap's serialization into `out` (its size computed before); returns the bytes written. */
static size_t
write_bitmap(const uint32_t *rows, const container_t *containers, size_t n, int has_runs, unsigned char *out)
{
    unsigned char *at = write_header(containers, n, has_runs, out);
    for (size_t i = 0; i < n; i++) {
        const container_t *c = &containers[i];
        const uint32_t *low = rows + c->first;
        if (c->type == ARRAY) {
            for (uint32_t j = 0; j < c->card; j++, at += 2)
                put16(at, low[j] & 0xFFFF);
        }
        else if (c->type == RUN) {
            put16(at, c->runs);
            at += 2;
            for (uint32_t j = 0; j < c->card;) {
                uint32_t k = j + 1;
                while (k < c->card && low[k] == low[k - 1] + 1)
                    k++;
                put16(at, low[j] & 0xFFFF);
                put16(at + 2, k - j - 1);
                at += 4;
                j = k;
            }
        }
        else {
            uint64_t words[1024] = {0};
            for (uint32_t j = 0; j < c->card; j++)
                words[(low[j] & 0xFFFF) >> 6] |= (uint64_t)1 << (low[j] & 63);
            for (int w = 0; w < 1024; w++, at += 8) {
                put32(at, (uint32_t)words[w]);
                put32(at + 4, (uint32_t)(words[w] >> 32));
            }
        }
    }
    return (size_t)(at - out);
}

PyDoc_STRVAR(serialize_groups_doc,
"serialize_groups(rows: buffer of uint32, starts: buffer of int64, counts: buffer of int64)\n"
"    -> tuple[bytes, bytearray]\n\n"
"Bitmap i holds rows[starts[i]:starts[i] + counts[i]] (strictly ascending): the run-optimized\n"
"portable serializations of all of them back to back, and each one's length (int64).");

static PyObject *
serialize_groups(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer rows, starts, counts;
    if (!PyArg_ParseTuple(args, "y*y*y*:serialize_groups", &rows, &starts, &counts))
        return NULL;
    PyObject *result = NULL, *blob = NULL, *lengths = NULL;
    container_t *containers = NULL;
    size_t *found = NULL;
    char *run_flags = NULL;
    Py_ssize_t groups = starts.len / 8, total_rows = rows.len / 4;
    const int64_t *start_data = starts.buf, *count_data = counts.buf;
    const uint32_t *row_data = rows.buf;
    if (rows.len % 4 != 0 || starts.len % 8 != 0 || counts.len != starts.len) {
        PyErr_SetString(PyExc_ValueError, "serialize_groups: uint32 rows, int64 starts and counts");
        goto done;
    }
    size_t most = 1;
    for (Py_ssize_t g = 0; g < groups; g++) {
        if (start_data[g] < 0 || count_data[g] < 0 || count_data[g] > total_rows - start_data[g]) {
            PyErr_Format(PyExc_ValueError, "serialize_groups: group %zd lies outside the rows", g);
            goto done;
        }
        if ((size_t)count_data[g] > most)
            most = (size_t)count_data[g];
    }
    if (most > 65536)
        most = 65536;
    /* one pass finds every group's containers (kept: the write needs them again), the next
     * writes them; `capacity` grows with the containers found */
    lengths = PyByteArray_FromStringAndSize(NULL, groups * 8);
    size_t capacity = most > 4096 ? most : 4096, used = 0;
    containers = PyMem_RawMalloc(capacity * sizeof(container_t));
    found = PyMem_RawMalloc((size_t)(groups ? groups : 1) * sizeof(size_t));
    run_flags = PyMem_RawMalloc((size_t)(groups ? groups : 1));
    if (lengths == NULL || containers == NULL || found == NULL || run_flags == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t *length_data = (int64_t *)PyByteArray_AS_STRING(lengths);
    size_t total = 0;
    int failed = 0;
    Py_ssize_t descending = -1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t g = 0; g < groups; g++) {
        if (capacity - used < most) {
            size_t grown = capacity * 2;
            container_t *larger = PyMem_RawRealloc(containers, grown * sizeof(container_t));
            if (larger == NULL) {
                failed = 1;
                break;
            }
            containers = larger;
            capacity = grown;
        }
        int has_runs;
        size_t n = containers_of(row_data + start_data[g], (uint32_t)count_data[g], containers + used, &has_runs);
        if (n == NOT_ASCENDING) {
            descending = g;
            break;
        }
        size_t size = header_size(n, has_runs);
        for (size_t i = 0; i < n; i++)
            size += container_size(&containers[used + i]);
        found[g] = n;
        run_flags[g] = (char)has_runs;
        used += n;
        length_data[g] = (int64_t)size;
        total += size;
    }
    Py_END_ALLOW_THREADS
    if (descending >= 0) {
        PyErr_Format(PyExc_ValueError, "serialize_groups: group %zd is not strictly ascending", descending);
        goto done;
    }
    if (failed || total > PY_SSIZE_T_MAX) {
        PyErr_NoMemory();
        goto done;
    }
    blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (blob == NULL)
        goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(blob);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t g = 0, first = 0; g < groups; first += (Py_ssize_t)found[g], g++)
        out += write_bitmap(row_data + start_data[g], containers + first, found[g], run_flags[g], out);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OO)", blob, lengths);
done:
    Py_XDECREF(blob);
    Py_XDECREF(lengths);
    PyMem_RawFree(containers);
    PyMem_RawFree(found);
    PyMem_RawFree(run_flags);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&counts);
    return result;
}

/* mask_bitmap: the bitmap of a column's NULL rows straight from its validity bytes, 64 rows a
 * word: a 90 %-NULL column listed its 900k NULL rows (3.6 MB) to serialize them again from the
 * list; a container here is its 1024 words, their cardinality and runs counted with popcount. */

/* The bit after `from` (< 65536) in `words` that is `set` (1) or clear (0); 65536 if none. */
static inline uint32_t
next_bit(const uint64_t *words, uint32_t from, int set)
{
    uint32_t w = from >> 6;
    uint64_t word = (set ? words[w] : ~words[w]) & (~(uint64_t)0 << (from & 63));
    while (word == 0) {
        if (++w == 1024)
            return 65536;
        word = set ? words[w] : ~words[w];
    }
    return w << 6 | (uint32_t)__builtin_ctzll(word);
}

/* One container's bytes from its words (type, cardinality and runs counted before). */
static unsigned char *
write_words(const uint64_t *words, const container_t *c, unsigned char *at)
{
    if (c->type == BITSET) {
        for (int w = 0; w < 1024; w++, at += 8) {
            put32(at, (uint32_t)words[w]);
            put32(at + 4, (uint32_t)(words[w] >> 32));
        }
    }
    else if (c->type == ARRAY) {
        for (uint32_t w = 0; w < 1024; w++)
            for (uint64_t word = words[w]; word; word &= word - 1, at += 2)
                put16(at, w << 6 | (uint32_t)__builtin_ctzll(word));
    }
    else {
        put16(at, c->runs);
        at += 2;
        for (uint32_t start = next_bit(words, 0, 1); start < 65536;) {
            uint32_t end = next_bit(words, start, 0);
            put16(at, start);
            put16(at + 2, end - start - 1);
            at += 4;
            start = end < 65536 ? next_bit(words, end, 1) : 65536;
        }
    }
    return at;
}

/* Bit b set where flags[b] (of 64) is 0: eight bytes at a time, each byte's "not zero" moved
 * to its top bit and the eight gathered by one multiplication (no two partial products meet). */
static inline uint64_t
null_word(const unsigned char *flags)
{
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full;
    uint64_t word = 0;
    for (int j = 0; j < 8; j++) {
        uint64_t bytes;
        memcpy(&bytes, flags + 8 * j, 8);
        uint64_t nonzero = ((((bytes & low7) + low7) | bytes) >> 7) & 0x0101010101010101ull;
        word |= ((nonzero * 0x0102040810204080ull) >> 56) << (8 * j);
    }
    return ~word;
}

PyDoc_STRVAR(mask_bitmap_doc,
"mask_bitmap(valid: buffer of bool) -> tuple[bytes, int, int]\n\n"
"The run-optimized portable serialization of the rows whose `valid` byte is 0 (no bytes for\n"
"none), their count and the first of them (-1: none).");

static PyObject *
mask_bitmap(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer valid;
    if (!PyArg_ParseTuple(args, "y*:mask_bitmap", &valid))
        return NULL;
    PyObject *result = NULL, *blob = NULL;
    Py_ssize_t rows = valid.len;
    size_t chunks = (size_t)(rows + 65535) >> 16, n = 0, size = 0;
    uint64_t *words = NULL;
    container_t *containers = NULL;
    long long total = 0, first = -1;
    int has_runs = 0;
    if (rows > (Py_ssize_t)UINT32_MAX + 1) {
        PyErr_SetString(PyExc_ValueError, "mask_bitmap: at most 2**32 rows");
        goto done;
    }
    words = PyMem_RawMalloc((chunks ? chunks : 1) * 1024 * sizeof(uint64_t));
    containers = PyMem_RawMalloc((chunks ? chunks : 1) * sizeof(container_t));
    if (words == NULL || containers == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const unsigned char *flags = valid.buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t chunk = 0; chunk < chunks; chunk++) {
        uint64_t *own = words + n * 1024, carry = 0;
        uint32_t card = 0, runs = 0;
        for (Py_ssize_t w = 0; w < 1024; w++) {
            Py_ssize_t base = (Py_ssize_t)(chunk << 16) + (w << 6);
            uint64_t word = 0;
            if (base + 64 <= rows)
                word = null_word(flags + base);
            else
                for (Py_ssize_t b = 0; base + b < rows; b++)
                    word |= (uint64_t)(flags[base + b] == 0) << b;
            own[w] = word;
            card += (uint32_t)__builtin_popcountll(word);
            runs += (uint32_t)__builtin_popcountll(word & ~(word << 1 | carry));
            carry = word >> 63;
        }
        if (card == 0)
            continue;
        if (first < 0)
            first = (long long)(chunk << 16) + next_bit(own, 0, 1);
        container_t *c = &containers[n++];
        c->first = 0;
        c->card = card;
        c->runs = runs;
        c->key = (uint16_t)chunk;
        c->type = card <= ARRAY_MAX ? ARRAY : BITSET;
        if (2 + 4 * (size_t)runs < (c->type == ARRAY ? 2 * (size_t)card : BITSET_BYTES))
            c->type = RUN;
        has_runs |= c->type == RUN;
        size += container_size(c);
        total += card;
    }
    Py_END_ALLOW_THREADS
    size = n ? size + header_size(n, has_runs) : 0;
    blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (blob == NULL)
        goto done;
    if (n) {
        unsigned char *at = write_header(containers, n, has_runs, (unsigned char *)PyBytes_AS_STRING(blob));
        for (size_t i = 0; i < n; i++)
            at = write_words(words + i * 1024, &containers[i], at);
    }
    result = Py_BuildValue("(OLL)", blob, total, first);
done:
    Py_XDECREF(blob);
    PyMem_RawFree(words);
    PyMem_RawFree(containers);
    PyBuffer_Release(&valid);
    return result;
}

PyDoc_STRVAR(serialize_slices_doc,
"serialize_slices(rows: buffer of uint32, values: buffer of uint64, count: int) -> tuple[bytes, bytearray]\n\n"
"The bit slices of a bit-sliced index: bitmap i (i < count) holds the rows (strictly ascending)\n"
"whose value has bit i set; their run-optimized portable serializations back to back, and\n"
"each one's length (int64).");

/* Dense rows (a data file's rows, NULLs and the other sign's rows aside): the slices as
 * bitsets over the rows' span, 64 rows at a time by one 64x64 bit transpose of their values
 * (a row without a value has value 0: in no slice); then each slice's containers are counted
 * (cardinality, runs), typed and written as CRoaring would write them. */

#define WORDS 1024

static inline int
popcount64(uint64_t word)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(word);
#else
    int count = 0;
    for (; word; word &= word - 1)
        count++;
    return count;
#endif
}

static inline int
ctz64(uint64_t word)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(word);
#else
    int n = 0;
    while (!(word & 1)) {
        word >>= 1;
        n++;
    }
    return n;
#endif
}

/* Hacker's Delight's 64x64 transpose: afterwards bit 63 - r of a[63 - c] is bit c of the
 * original a[r]. */
static inline void
transpose64(uint64_t a[64])
{
    uint64_t m = 0x00000000FFFFFFFFull;
    for (int j = 32; j; j >>= 1, m ^= m << j) {
        for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
            uint64_t t = (a[k] ^ (a[k | j] >> j)) & m;
            a[k] ^= t;
            a[k | j] ^= t << j;
        }
    }
}

/* CRoaring's `bitset_container_number_of_runs`. */
static uint32_t
bitset_runs(const uint64_t *words)
{
    uint32_t runs = 0;
    uint64_t next = words[0];
    for (int i = 0; i < WORDS - 1; i++) {
        uint64_t word = next;
        next = words[i + 1];
        runs += (uint32_t)popcount64(~word & (word << 1)) + (uint32_t)((word >> 63) & ~next);
    }
    runs += (uint32_t)popcount64(~next & (next << 1)) + (uint32_t)(next >> 63);
    return runs;
}

/* One container's data from its bitset, as `type`. */
static unsigned char *
write_from_bitset(const uint64_t *words, int type, uint32_t runs, unsigned char *at)
{
    if (type == BITSET) {
        for (int w = 0; w < WORDS; w++, at += 8) {
            put32(at, (uint32_t)words[w]);
            put32(at + 4, (uint32_t)(words[w] >> 32));
        }
    }
    else if (type == ARRAY) {
        for (int w = 0; w < WORDS; w++)
            for (uint64_t word = words[w]; word; word &= word - 1, at += 2)
                put16(at, (uint32_t)(w * 64 + ctz64(word)));
    }
    else {                          /* CRoaring's run container from a bitset */
        put16(at, runs);
        at += 2;
        int index = 0;
        uint64_t word = words[0];
        for (;;) {
            while (word == 0 && index < WORDS - 1)
                word = words[++index];
            if (word == 0)
                break;
            uint32_t start = (uint32_t)(index * 64 + ctz64(word));
            uint64_t filled = word | (word - 1);
            while (filled == UINT64_MAX && index < WORDS - 1)
                filled = words[++index];
            if (filled == UINT64_MAX) {
                put16(at, start);
                put16(at + 2, 65536 - start - 1);
                at += 4;
                break;
            }
            uint32_t end = (uint32_t)(index * 64 + ctz64(~filled));
            put16(at, start);
            put16(at + 2, end - start - 1);
            at += 4;
            word = filled & (filled + 1);
        }
    }
    return at;
}

static inline int
dense_type(uint32_t card, uint32_t runs)
{
    int type = card <= ARRAY_MAX ? ARRAY : BITSET;
    if (2 + 4 * (size_t)runs < (type == ARRAY ? 2 * (size_t)card : BITSET_BYTES))
        type = RUN;
    return type;
}

static inline size_t
dense_size(uint32_t card, uint32_t runs)
{
    container_t c = {0, card, runs, 0, (uint8_t)dense_type(card, runs)};
    return container_size(&c);
}

/* `serialize_slices` over dense rows (`slices` <= 64): 0, or -1 without memory. `lengths`
 * gets each slice's length; `*out`, `*size` the bytes (PyMem_Raw). Runs without the GIL. */
static int
dense_slices(const uint32_t *rows, const uint64_t *values, Py_ssize_t total_rows, Py_ssize_t slices,
             int64_t *lengths, unsigned char **out, size_t *size)
{
    int result = -1;
    uint32_t base = rows[0] >> 16;
    size_t chunks = (size_t)(rows[total_rows - 1] >> 16) - base + 1, words_per_slice = chunks * WORDS;
    uint64_t *bits = PyMem_RawCalloc(words_per_slice * (size_t)(slices ? slices : 1), 8);
    uint32_t *cards = PyMem_RawMalloc(chunks * (size_t)(slices ? slices : 1) * 4);
    uint32_t *runs = PyMem_RawMalloc(chunks * (size_t)(slices ? slices : 1) * 4);
    *out = NULL;
    if (bits == NULL || cards == NULL || runs == NULL)
        goto done;
    uint64_t block[64];
    Py_ssize_t j = 0;
    uint64_t mask = slices >= 64 ? UINT64_MAX : (((uint64_t)1 << slices) - 1);
    while (j < total_rows) {                               /* 64 rows' values -> a word per slice */
        size_t word = ((size_t)rows[j] - ((size_t)base << 16)) >> 6;
        uint32_t first = (uint32_t)(word << 6) + (base << 16);
        memset(block, 0, sizeof(block));
        for (; j < total_rows && rows[j] - first < 64; j++)
            block[63 - (rows[j] - first)] = values[j] & mask;
        transpose64(block);
        for (Py_ssize_t i = 0; i < slices; i++)
            bits[(size_t)i * words_per_slice + word] = block[63 - i];
    }
    size_t total = 0;
    for (Py_ssize_t i = 0; i < slices; i++) {              /* containers: cardinality, runs */
        size_t n = 0, data = 0;
        int has_runs = 0;
        for (size_t c = 0; c < chunks; c++) {
            const uint64_t *container = bits + (size_t)i * words_per_slice + c * WORDS;
            uint32_t card = 0;
            for (int w = 0; w < WORDS; w++)
                card += (uint32_t)popcount64(container[w]);
            uint32_t run = card ? bitset_runs(container) : 0;
            cards[(size_t)i * chunks + c] = card;
            runs[(size_t)i * chunks + c] = run;
            if (card) {
                n++;
                data += dense_size(card, run);
                has_runs |= dense_type(card, run) == RUN;
            }
        }
        lengths[i] = (int64_t)(header_size(n, has_runs) + data);
        total += (size_t)lengths[i];
    }
    *out = PyMem_RawMalloc(total ? total : 1);
    if (*out == NULL)
        goto done;
    unsigned char *at = *out;
    for (Py_ssize_t i = 0; i < slices; i++) {              /* each slice: header, then data */
        const uint32_t *card = cards + (size_t)i * chunks, *run = runs + (size_t)i * chunks;
        size_t n = 0;
        int has_runs = 0;
        for (size_t c = 0; c < chunks; c++) {
            n += card[c] != 0;
            has_runs |= card[c] && dense_type(card[c], run[c]) == RUN;
        }
        if (has_runs) {
            put32(at, COOKIE | (uint32_t)((n - 1) << 16));
            at += 4;
            memset(at, 0, (n + 7) / 8);
            for (size_t c = 0, k = 0; c < chunks; c++) {
                if (card[c]) {
                    if (dense_type(card[c], run[c]) == RUN)
                        at[k / 8] |= (unsigned char)(1u << (k % 8));
                    k++;
                }
            }
            at += (n + 7) / 8;
        }
        else {
            put32(at, COOKIE_NO_RUNS);
            put32(at + 4, (uint32_t)n);
            at += 8;
        }
        for (size_t c = 0; c < chunks; c++) {
            if (card[c]) {
                put16(at, (uint32_t)(base + c));
                put16(at + 2, card[c] - 1);
                at += 4;
            }
        }
        if (!has_runs || n >= NO_OFFSET_THRESHOLD) {
            size_t offset = header_size(n, has_runs);
            for (size_t c = 0; c < chunks; c++) {
                if (card[c]) {
                    put32(at, (uint32_t)offset);
                    offset += dense_size(card[c], run[c]);
                    at += 4;
                }
            }
        }
        for (size_t c = 0; c < chunks; c++)
            if (card[c])
                at = write_from_bitset(bits + (size_t)i * words_per_slice + c * WORDS,
                                       dense_type(card[c], run[c]), run[c], at);
    }
    *size = total;
    result = 0;
done:
    PyMem_RawFree(bits);
    PyMem_RawFree(cards);
    PyMem_RawFree(runs);
    if (result < 0) {
        PyMem_RawFree(*out);
        *out = NULL;
    }
    return result;
}

#define SLICE_GROUP 8
#define DENSE 4

static PyObject *
serialize_slices(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer rows, values;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "y*y*n:serialize_slices", &rows, &values, &count))
        return NULL;
    PyObject *result = NULL, *blob = NULL, *lengths = NULL;
    uint32_t *scratch = NULL;
    container_t *containers = NULL;
    unsigned char *out = NULL;
    Py_ssize_t total_rows = rows.len / 4;
    const uint32_t *row_data = rows.buf;
    const uint64_t *value_data = values.buf;
    if (rows.len % 4 != 0 || values.len != total_rows * 8 || count < 0 || count > PY_SSIZE_T_MAX / 8) {
        PyErr_SetString(PyExc_ValueError, "serialize_slices: a uint64 value per uint32 row");
        goto done;
    }
    for (Py_ssize_t j = 1; j < total_rows; j++) {
        if (row_data[j] <= row_data[j - 1]) {
            PyErr_SetString(PyExc_ValueError, "serialize_slices: the rows are not strictly ascending");
            goto done;
        }
    }
    if (count <= 64 && total_rows > 0
            && (size_t)((row_data[total_rows - 1] >> 16) - (row_data[0] >> 16) + 1) * 65536 <= (size_t)total_rows * DENSE) {
        /* dense rows: their span at most DENSE times their number */
        lengths = PyByteArray_FromStringAndSize(NULL, count * 8);
        if (lengths == NULL)
            goto done;
        int64_t *length_data = (int64_t *)PyByteArray_AS_STRING(lengths);
        int status;
        size_t size = 0;
        Py_BEGIN_ALLOW_THREADS
        status = dense_slices(row_data, value_data, total_rows, count, length_data, &out, &size);
        Py_END_ALLOW_THREADS
        if (status < 0) {
            PyErr_NoMemory();
            goto done;
        }
        blob = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)size);
        if (blob != NULL)
            result = Py_BuildValue("(OO)", blob, lengths);
        goto done;
    }
    /* sparse rows: slices are split out GROUP at a time, each row's value read once per group:
     * the rows and values stream through the cache 8x less often than slice by slice */
    Py_ssize_t group = total_rows > 0 && total_rows < ((Py_ssize_t)1 << 24) ? SLICE_GROUP : 1;
    lengths = PyByteArray_FromStringAndSize(NULL, count * 8);
    scratch = PyMem_RawMalloc((size_t)(total_rows ? total_rows : 1) * 4 * (size_t)group);
    containers = PyMem_RawMalloc((size_t)(total_rows < 65536 ? total_rows + 1 : 65536) * sizeof(container_t));
    if (lengths == NULL || scratch == NULL || containers == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int64_t *length_data = (int64_t *)PyByteArray_AS_STRING(lengths);
    size_t used = 0, capacity = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t first = 0; first < count && !failed; first += group) {
        Py_ssize_t last = first + group < count ? first + group : count;
        uint32_t sizes[SLICE_GROUP] = {0};
        if (group == SLICE_GROUP && last - first == SLICE_GROUP && last <= 64) {
            for (Py_ssize_t j = 0; j < total_rows; j++) {      /* branch-free: the bits are random */
                uint64_t bits = value_data[j] >> first;
                uint32_t row = row_data[j];
                for (int g = 0; g < SLICE_GROUP; g++) {
                    scratch[g * total_rows + sizes[g]] = row;
                    sizes[g] += (uint32_t)((bits >> g) & 1);
                }
            }
        }
        else {
            for (Py_ssize_t i = first; i < last; i++) {
                if (i >= 64)
                    continue;
                uint32_t *slice = scratch + (i - first) * total_rows;
                for (Py_ssize_t j = 0; j < total_rows; j++) {
                    slice[sizes[i - first]] = row_data[j];
                    sizes[i - first] += (uint32_t)((value_data[j] >> i) & 1);
                }
            }
        }
        for (Py_ssize_t i = first; i < last && !failed; i++) {
            const uint32_t *slice = scratch + (i - first) * total_rows;
            int has_runs;
            size_t n = containers_of(slice, sizes[i - first], containers, &has_runs);
            size_t bytes = header_size(n, has_runs);
            for (size_t c = 0; c < n; c++)
                bytes += container_size(&containers[c]);
            if (bytes > capacity - used) {
                size_t grown = capacity ? capacity : 65536;
                while (bytes > grown - used)
                    grown *= 2;
                unsigned char *larger = PyMem_RawRealloc(out, grown);
                if (larger == NULL) {
                    failed = 1;
                    break;
                }
                out = larger;
                capacity = grown;
            }
            used += write_bitmap(slice, containers, n, has_runs, out + used);
            length_data[i] = (int64_t)bytes;
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    blob = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)used);
    if (blob == NULL)
        goto done;
    result = Py_BuildValue("(OO)", blob, lengths);
done:
    Py_XDECREF(blob);
    Py_XDECREF(lengths);
    PyMem_RawFree(scratch);
    PyMem_RawFree(containers);
    PyMem_RawFree(out);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&values);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* block_search */

enum { KEY_INT = 0, KEY_UBYTE = 1, KEY_FLOAT = 2, KEY_BYTES = 3 };

/* Where a key sorts, for the fixed-width kinds (as keys.py's `order_bytes`). */
static int64_t
key_order(const unsigned char *k, int kind, int width)
{
    uint64_t bits = 0;
    for (int b = width - 1; b >= 0; b--)
        bits = bits << 8 | k[b];
    if (kind == KEY_UBYTE)
        return (int64_t)bits;
    uint64_t sign = (uint64_t)1 << (8 * width - 1);
    if (kind == KEY_INT)
        return (int64_t)((bits ^ sign) - sign);             /* sign-extend */
    uint64_t magnitude = bits & (sign - 1);
    uint64_t exponent = width == 4 ? (uint64_t)0xFF << 23 : (uint64_t)0x7FF << 52;
    if ((magnitude & exponent) == exponent && magnitude != exponent)
        return INT64_MAX;                                   /* every NaN, above +inf */
    return bits & sign ? -(int64_t)magnitude - 1 : (int64_t)magnitude;
}

/* The varint at *at (at most `max_bytes` bytes, before `end`): 0 when malformed. */
static int
varint(const unsigned char *data, Py_ssize_t *at, Py_ssize_t end, int max_bytes, uint64_t *value)
{
    uint64_t v = 0;
    for (int b = 0; b < max_bytes && *at < end; b++) {
        unsigned char byte = data[(*at)++];
        v |= (uint64_t)(byte & 0x7F) << (7 * b);
        if (byte < 0x80) {
            *value = v;
            return 1;
        }
    }
    return 0;
}

/* A block as block_search's arguments describe it, and the probe. */
typedef struct {
    const unsigned char *data;
    Py_ssize_t size, len_entries, count, aligned;
    int kind, width;
    int64_t probe_order;
    const unsigned char *probe_bytes;
    Py_ssize_t probe_len;
} Search;

/* Parse (block, len_entries, count, aligned_size, kind, width, probe) into `s`; 0 with an
 * exception set when they do not describe a block. */
static int
search_init(Search *s, Py_buffer *block, Py_ssize_t len_entries, Py_ssize_t count, Py_ssize_t aligned,
            int kind, int width, PyObject *probe)
{
    s->data = block->buf;
    s->size = block->len;
    s->len_entries = len_entries;
    s->count = count;
    s->aligned = aligned;
    s->kind = kind;
    s->width = width;
    if (len_entries < 0 || count < 0 || aligned < 0 || len_entries > block->len
        || (!aligned && count > (block->len - len_entries) / 4)
        || (aligned && count > len_entries / aligned)
        || (kind == KEY_BYTES ? !PyBytes_Check(probe)
            : kind < 0 || kind > KEY_BYTES || (kind == KEY_UBYTE ? width != 1
              : kind == KEY_FLOAT ? width != 4 && width != 8
              : width != 1 && width != 2 && width != 4 && width != 8))) {
        PyErr_SetString(PyExc_ValueError, "block_search: arguments do not describe a block");
        return 0;
    }
    if (kind == KEY_BYTES) {
        s->probe_bytes = (const unsigned char *)PyBytes_AS_STRING(probe);
        s->probe_len = PyBytes_GET_SIZE(probe);
        return 1;
    }
    s->probe_order = PyLong_AsLongLong(probe);
    return !(s->probe_order == -1 && PyErr_Occurred());
}

/* Entry i's key: where it starts (*key) and its length; 0 when it is no key of the kind. */
static int
entry_key(const Search *s, Py_ssize_t i, Py_ssize_t *key, Py_ssize_t *len)
{
    Py_ssize_t start;
    if (s->aligned)
        start = i * s->aligned;
    else {
        const unsigned char *p = s->data + s->len_entries + 4 * i;
        start = (Py_ssize_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    }
    uint64_t len_key;
    if (start >= s->len_entries || !varint(s->data, &start, s->size, 5, &len_key)
        || len_key > (uint64_t)(s->len_entries - start)
        || (s->kind != KEY_BYTES && len_key != (uint64_t)s->width))
        return 0;
    *key = start;
    *len = (Py_ssize_t)len_key;
    return 1;
}

/* The key at data[key:key+len] against the probe: <0, 0, >0. */
static int
compare_key(const Search *s, Py_ssize_t key, Py_ssize_t len)
{
    if (s->kind == KEY_BYTES) {
        Py_ssize_t common = len < s->probe_len ? len : s->probe_len;
        int c = common ? memcmp(s->data + key, s->probe_bytes, (size_t)common) : 0;
        return c ? c : (len > s->probe_len) - (len < s->probe_len);
    }
    int64_t order = key_order(s->data + key, s->kind, s->width);
    return (order > s->probe_order) - (order < s->probe_order);
}

/* reader.py's binary search: the first entry >= probe (> when not inclusive), or -1 - i when
 * entry i, which it had to compare, is no key of the kind. */
static Py_ssize_t
search_entries(const Search *s, int inclusive)
{
    Py_ssize_t lo = 0, hi = s->count;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2, key, len;
        if (!entry_key(s, mid, &key, &len))
            return -1 - mid;
        int c = compare_key(s, key, len);
        if (c < 0 || (!inclusive && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Entry i's value (after its key at data[key:key+len]): *start, *end; 0 unless it is inside
 * the entries and not empty (as `sst.Block.entry` checks). */
static int
entry_value(const Search *s, Py_ssize_t key, Py_ssize_t len, Py_ssize_t *start, Py_ssize_t *end)
{
    Py_ssize_t at = key + len;
    uint64_t len_value;
    if (at >= s->len_entries || !varint(s->data, &at, s->size, 5, &len_value) || len_value == 0
        || len_value > (uint64_t)(s->len_entries - at))
        return 0;
    *start = at;
    *end = at + (Py_ssize_t)len_value;
    return 1;
}

PyDoc_STRVAR(block_search_doc,
"block_search(block: buffer, len_entries: int, count: int, aligned_size: int, kind: int,\n"
"             width: int, probe: int | bytes, inclusive: bool, /) -> int\n\n"
"The first of the block's `count` entries whose key is >= `probe` (> when not inclusive), by\n"
"the binary search reader.py does: entry i starts at i * aligned_size, or where the block's\n"
"table after `len_entries` says; its key is a var_len_int length and the bytes. Keys compare\n"
"as kind 0 (little-endian signed integers of `width` bytes), 1 (one unsigned byte), 2 (IEEE\n"
"bits of `width` bytes, Java's compareTo order) against an int64 order, or 3 (unsigned bytes)\n"
"against bytes. -1 - i when entry i is not a key of the kind: the caller locates the error.");

static PyObject *
block_search(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer block;
    Py_ssize_t len_entries, count, aligned;
    int kind, width, inclusive;
    PyObject *probe, *result = NULL;
    Search s;
    if (!PyArg_ParseTuple(args, "y*nnniiOp:block_search", &block, &len_entries, &count, &aligned,
                          &kind, &width, &probe, &inclusive))
        return NULL;
    if (search_init(&s, &block, len_entries, count, aligned, kind, width, probe))
        result = PyLong_FromSsize_t(search_entries(&s, inclusive));
    PyBuffer_Release(&block);
    return result;
}

/* The row ids of the value at data[start:end], as `row_ids` returns them (None: malformed). */
static PyObject *row_ids_of(const unsigned char *data, Py_ssize_t start, Py_ssize_t end);

/* find_row_ids' answer for the block `s` describes: the probe's row ids, [] or None. */
static PyObject *
lookup_entries(const Search *s, Py_ssize_t longest)
{
    Py_ssize_t key = 0, len = 0, start, end;
    Py_ssize_t i = search_entries(s, 1);
    if (i < 0 || (i < s->count && !entry_key(s, i, &key, &len)))
        Py_RETURN_NONE;
    if (i == s->count || compare_key(s, key, len) != 0)
        return PyList_New(0);
    if (!entry_value(s, key, len, &start, &end) || end - start > longest)
        Py_RETURN_NONE;
    return row_ids_of(s->data, start, end);
}

PyDoc_STRVAR(find_row_ids_doc,
"find_row_ids(block, len_entries, count, aligned_size, kind, width, probe, longest, /)\n"
"    -> list[int] | None\n\n"
"A point lookup in one data block: the row ids of the entry whose key equals `probe` ([] when\n"
"none does), found and checked as `block_search`, `Block.entry` and `row_ids` do; None when\n"
"an entry on the way is malformed (the caller's own lookup locates the error) or the value\n"
"is longer than `longest` bytes (the caller decodes long ones in bulk).");

static PyObject *
find_row_ids(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer block;
    Py_ssize_t len_entries, count, aligned, longest;
    int kind, width;
    PyObject *probe, *result = NULL;
    Search s;
    if (!PyArg_ParseTuple(args, "y*nnniiOn:find_row_ids", &block, &len_entries, &count, &aligned,
                          &kind, &width, &probe, &longest))
        return NULL;
    if (search_init(&s, &block, len_entries, count, aligned, kind, width, probe))
        result = lookup_entries(&s, longest);
    PyBuffer_Release(&block);
    return result;
}

PyDoc_STRVAR(lookup_block_doc,
"lookup_block(raw, length, crc, kind, width, probe, longest, /) -> list[int] | None\n\n"
"A cold point lookup's whole data block step: `raw` is a block as the file stores it (`length`\n"
"bytes, then its 5-byte trailer), `crc` the CRC32 the caller computed over its first\n"
"`length + 1` bytes (-1: not checked). When the block is uncompressed, its CRC32 matches and\n"
"its table describes entries (as `sst.read_block`'s fast path checks them), the row ids of\n"
"`probe` as `find_row_ids` finds them; None for anything else (the caller's `read_block` and\n"
"lookup locate the error, or decode a value longer than `longest` bytes in bulk).");

static PyObject *
lookup_block(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer raw;
    Py_ssize_t length, longest, count, len_entries, aligned;
    long long crc;
    int kind, width;
    PyObject *probe, *result = NULL;
    Search s;
    if (!PyArg_ParseTuple(args, "y*nLiiOn:lookup_block", &raw, &length, &crc, &kind, &width, &probe, &longest))
        return NULL;
    const unsigned char *p = raw.buf;
    if (length < 5 || raw.len != length + 5 || p[length] != 0
        || (crc >= 0 && (uint64_t)crc != ((uint64_t)p[length + 1] | (uint64_t)p[length + 2] << 8
                                           | (uint64_t)p[length + 3] << 16 | (uint64_t)p[length + 4] << 24)))
        goto decline;
    uint32_t tail = (uint32_t)p[length - 5] | (uint32_t)p[length - 4] << 8 | (uint32_t)p[length - 3] << 16
                    | (uint32_t)p[length - 2] << 24;
    if (p[length - 1] == 1) {           /* unaligned: entries, their starts, their count */
        len_entries = length - 5 - 4 * (Py_ssize_t)tail;
        if (len_entries <= 0 || tail == 0)
            goto decline;
        count = tail;
        aligned = 0;
    } else if (p[length - 1] == 0 && tail && (length - 5) % tail == 0) {    /* aligned */
        len_entries = length - 5;
        count = (length - 5) / tail;
        aligned = tail;
    } else
        goto decline;
    Py_buffer stored = raw;             /* the block without its trailer */
    stored.len = length;
    if (search_init(&s, &stored, len_entries, count, aligned, kind, width, probe))
        result = lookup_entries(&s, longest);
    PyBuffer_Release(&raw);
    return result;
decline:
    PyBuffer_Release(&raw);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(find_handle_doc,
"find_handle(block, len_entries, count, aligned_size, kind, width, probe, /)\n"
"    -> tuple[int, int, int] | None\n\n"
"In an index block: (i, offset, size) of the first entry whose key is >= `probe` and the data\n"
"block handle it holds (a var_len_long offset and a var_len_int size filling the value, the\n"
"size at most 2^31 - 1, as `sst.parse_handle` checks); (count, 0, 0) when every key is below\n"
"it; None when an entry on the way is malformed (the caller locates the error).");

static PyObject *
find_handle(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer block;
    Py_ssize_t len_entries, count, aligned, i, key, len, start, end;
    int kind, width;
    uint64_t offset, size;
    PyObject *probe, *result = NULL;
    Search s;
    if (!PyArg_ParseTuple(args, "y*nnniiO:find_handle", &block, &len_entries, &count, &aligned,
                          &kind, &width, &probe))
        return NULL;
    if (!search_init(&s, &block, len_entries, count, aligned, kind, width, probe))
        goto done;
    i = search_entries(&s, 1);
    if (i == count)
        result = Py_BuildValue("(nii)", i, 0, 0);
    else if (i < 0 || !entry_key(&s, i, &key, &len) || !entry_value(&s, key, len, &start, &end)
             || !varint(s.data, &start, end, 9, &offset) || !varint(s.data, &start, end, 5, &size)
             || start != end || size > 0x7FFFFFFF)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("(nKK)", i, (unsigned long long)offset, (unsigned long long)size);
done:
    PyBuffer_Release(&block);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* row_ids */

PyDoc_STRVAR(row_ids_doc,
"row_ids(block: buffer, start: int, end: int, /) -> list[int] | None\n\n"
"The row ids of the btree value at block[start:end]: a var_len_int count (> 0), then exactly\n"
"that many var_len_longs (at most 9 bytes each) filling the value; None when it is not one\n"
"(the caller locates the error).");

static PyObject *
row_ids_of(const unsigned char *data, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t count, id;
    Py_ssize_t at = start;
    /* every id takes at least a byte: a count above the bytes left is malformed */
    if (!varint(data, &at, end, 5, &count) || count == 0 || count > (uint64_t)(end - at))
        Py_RETURN_NONE;
    PyObject *result = PyList_New((Py_ssize_t)count);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        if (!varint(data, &at, end, 9, &id)) {
            Py_DECREF(result);
            Py_RETURN_NONE;
        }
        PyObject *item = PyLong_FromUnsignedLongLong(id);
        if (item == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, item);
    }
    if (at != end) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    return result;
}

static PyObject *
row_ids(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer block;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn:row_ids", &block, &start, &end))
        return NULL;
    PyObject *result = NULL;
    if (start < 0 || end > block.len || start > end)
        PyErr_SetString(PyExc_ValueError, "row_ids: the value is not inside the block");
    else
        result = row_ids_of(block.buf, start, end);
    PyBuffer_Release(&block);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* btree_tail: a btree global index file's footer and index block, from the file's last bytes
 * (one read), checked as `sst.read_footer` and `sst.parse_block`'s fast path check them; what
 * they do not check is declined, for those Python paths to locate. With `block_search`'s
 * `find_handle` and `lookup_block`, a reader opened per point lookup builds no Python object
 * for the footer's checks or the index block's. */

#define BTREE_FOOTER 52
#define BTREE_MAGIC 0x50425449u

static inline uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Whether `length` bytes at `offset` end at or before `limit` (no overflow). */
static inline int
fits(uint64_t offset, uint64_t length, uint64_t limit)
{
    return offset <= limit && length <= limit - offset;
}

/* `crc(data[0:n])` (a Python callable returning the CRC32) against `stored`: 1 equal, 0 not,
 * -1 with an exception set. */
static int
crc_matches(PyObject *crc, const unsigned char *data, Py_ssize_t n, uint32_t stored)
{
    PyObject *view = PyMemoryView_FromMemory((char *)data, n, PyBUF_READ);
    if (view == NULL)
        return -1;
    PyObject *value = PyObject_CallOneArg(crc, view);
    Py_DECREF(view);
    if (value == NULL)
        return -1;
    unsigned long long computed = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    if (computed == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    return computed == stored;
}

/* The table at the end of the `length` stored bytes of an uncompressed block: its entry count,
 * the entries' length and the aligned entry size (0: unaligned, the entries' starts before the
 * table); 0 unless it describes entries (as `sst.parse_block`'s fast path checks). */
static int
block_table(const unsigned char *block, Py_ssize_t length, Py_ssize_t *count, Py_ssize_t *len_entries,
            Py_ssize_t *aligned)
{
    if (length < 5)
        return 0;
    uint32_t table = le32(block + length - 5);
    if (block[length - 1] == 1) {       /* unaligned: entries, their starts, their count */
        if (table == 0 || (uint64_t)table > (uint64_t)(length - 5) / 4 || length - 5 - 4 * (Py_ssize_t)table <= 0)
            return 0;
        *len_entries = length - 5 - 4 * (Py_ssize_t)table;
        *count = table;
        *aligned = 0;
        return 1;
    }
    if (block[length - 1] == 0 && table && (length - 5) % table == 0) {      /* aligned */
        *len_entries = length - 5;
        *count = (length - 5) / table;
        *aligned = table;
        return 1;
    }
    return 0;
}

PyDoc_STRVAR(btree_tail_doc,
"btree_tail(tail, size, crc, /) -> tuple[tuple[int, ...], int, int, int, int] | None\n\n"
"`tail`: the last bytes of a btree global index file of `size` bytes. When they hold the\n"
"52-byte footer (its magic and version known, the index block, null bitmap and bloom filter\n"
"inside the file before it, as `sst.read_footer` checks) and the whole index block, whose\n"
"trailer says uncompressed, whose CRC32 `crc(stored bytes and compression byte)` matches\n"
"(`crc` None: not checked) and whose table describes entries (as `sst.parse_block`'s fast\n"
"path checks): (the footer's first eight fields, where the index block starts in `tail`, its\n"
"entry count, the entries' length, the aligned entry size or 0). None for anything else: the\n"
"caller's Python path reads it, locating any error.");

static PyObject *
btree_tail(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer tail;
    Py_ssize_t size, count, len_entries, aligned;
    PyObject *crc, *result = NULL;
    if (!PyArg_ParseTuple(args, "y*nO:btree_tail", &tail, &size, &crc))
        return NULL;
    const unsigned char *t = tail.buf;
    if (size < BTREE_FOOTER || tail.len < BTREE_FOOTER || tail.len > size)
        goto decline;
    const unsigned char *f = t + tail.len - BTREE_FOOTER;
    uint64_t ofs_bloom = le64(f), ofs_index = le64(f + 20), ofs_null = le64(f + 32);
    uint64_t num_expected = le64(f + 12);
    uint32_t len_bloom = le32(f + 8), len_index = le32(f + 28), len_null = le32(f + 40);
    uint64_t base = (uint64_t)(size - BTREE_FOOTER), tail_at = (uint64_t)(size - tail.len);
    if (le32(f + 48) != BTREE_MAGIC || le32(f + 44) != 1
        || !fits(ofs_index, (uint64_t)len_index + 5, base)
        || ((ofs_null || len_null) && !fits(ofs_null, (uint64_t)len_null + 4, base))
        || ((ofs_bloom || len_bloom || num_expected)
            && (!fits(ofs_bloom, len_bloom, base) || !len_bloom || !num_expected))
        || ofs_index < tail_at || len_index < 5)
        goto decline;
    /* the index block: inside `tail`, before the footer */
    Py_ssize_t start = (Py_ssize_t)(ofs_index - tail_at), length = (Py_ssize_t)len_index;
    const unsigned char *block = t + start;
    if (block[length] != 0)
        goto decline;
    if (crc != Py_None) {
        int matches = crc_matches(crc, block, length + 1, le32(block + length + 1));
        if (matches < 0)
            goto done;
        if (!matches)
            goto decline;
    }
    if (!block_table(block, length, &count, &len_entries, &aligned))
        goto decline;
    result = Py_BuildValue("((KKKKKKKK)nnnn)", (unsigned long long)ofs_bloom, (unsigned long long)len_bloom,
                           (unsigned long long)num_expected, (unsigned long long)ofs_index,
                           (unsigned long long)len_index, (unsigned long long)ofs_null,
                           (unsigned long long)len_null, 1ULL, start, count, len_entries, aligned);
    goto done;
decline:
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&tail);
    return result;
}

PyDoc_STRVAR(btree_lookup_doc,
"btree_lookup(fd, buffer, at, length, len_entries, count, aligned_size, kind, width, probe,\n"
"             longest, crc, blocks_end, /)\n"
"    -> list[int] | tuple[int, int, int, bytes, list[int] | None] | None\n\n"
"A point lookup's whole data step from an open file `fd`: the index block (`length` bytes at\n"
"`at` in `buffer`, its table as `btree_tail` found it) searched for `probe` as `find_handle`\n"
"searches it; [] when every key is\n"
"below it; None when an entry on the way is malformed or the data block's handle does not end\n"
"by `blocks_end` (the caller's path checks it, locating any error; nothing read). Else the data\n"
"block and its trailer read with one pread at its offset (OSError as `os.pread` raises it) and\n"
"(i, offset, size, the bytes read, the probe's row ids): the row ids as `lookup_block` finds\n"
"them with the CRC32 `crc(stored bytes and compression byte)` (`crc` None: not checked), or\n"
"None where it declines (the caller reads the bytes step by step).");

static PyObject *
btree_lookup(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer buffer;
    Py_ssize_t at, length, len_entries, count, aligned, longest, blocks_end, key, len, start, end;
    int fd, kind, width;
    uint64_t offset, size;
    PyObject *probe, *crc, *raw = NULL, *ids = NULL, *result = NULL;
    Search s;
    if (!PyArg_ParseTuple(args, "iy*nnnnniiOnOn:btree_lookup", &fd, &buffer, &at, &length, &len_entries, &count,
                          &aligned, &kind, &width, &probe, &longest, &crc, &blocks_end))
        return NULL;
    if (at < 0 || length < 0 || at > buffer.len || length > buffer.len - at) {
        PyErr_SetString(PyExc_ValueError, "btree_lookup: the index block is not inside the buffer");
        goto done;
    }
    Py_buffer index = {.buf = (char *)buffer.buf + at, .len = length};
    if (!search_init(&s, &index, len_entries, count, aligned, kind, width, probe))
        goto done;
    Py_ssize_t i = search_entries(&s, 1);
    if (i == count) {
        result = PyList_New(0);
        goto done;
    }
    if (i < 0 || !entry_key(&s, i, &key, &len) || !entry_value(&s, key, len, &start, &end)
        || !varint(s.data, &start, end, 9, &offset) || !varint(s.data, &start, end, 5, &size)
        || start != end || size > 0x7FFFFFFF || blocks_end < 0 || !fits(offset, size + 5, (uint64_t)blocks_end)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
#ifdef _WIN32
    result = Py_NewRef(Py_None);        /* no pread: the caller reads it */
    goto done;
#else
    Py_ssize_t n = (Py_ssize_t)size + 5, got;
    raw = PyBytes_FromStringAndSize(NULL, n);
    if (raw == NULL)
        goto done;
    for (;;) {                          /* as os.pread: retried when a signal interrupts it */
        Py_BEGIN_ALLOW_THREADS
        got = pread(fd, PyBytes_AS_STRING(raw), (size_t)n, (off_t)offset);
        Py_END_ALLOW_THREADS
        if (got >= 0 || errno != EINTR)
            break;
        if (PyErr_CheckSignals() < 0)
            goto done;
    }
    if (got < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    if (got < n) {                      /* cut short: the caller's path refuses it, located */
        if (_PyBytes_Resize(&raw, got) < 0)
            goto done;
        ids = Py_NewRef(Py_None);
    } else {
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(raw);
        Py_ssize_t length = (Py_ssize_t)size, block_count, block_entries, block_aligned;
        int matches = p[length] != 0 ? 0 : crc == Py_None ? 1 : crc_matches(crc, p, length + 1, le32(p + length + 1));
        if (matches < 0)
            goto done;
        if (matches && block_table(p, length, &block_count, &block_entries, &block_aligned)) {
            Py_buffer stored = {.buf = (void *)p, .len = length};
            Search b;
            if (!search_init(&b, &stored, block_entries, block_count, block_aligned, kind, width, probe))
                goto done;
            ids = lookup_entries(&b, longest);
            if (ids == NULL)
                goto done;
        } else
            ids = Py_NewRef(Py_None);
    }
    result = Py_BuildValue("(nKKNN)", i, (unsigned long long)offset, (unsigned long long)size, raw, ids);
    raw = ids = NULL;
#endif
done:
    Py_XDECREF(raw);
    Py_XDECREF(ids);
    PyBuffer_Release(&buffer);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* compress, split_rows: a column's NULLs set aside. numpy's boolean indexing and flatnonzero
 * branch on every row: at 90 % NULL, one misprediction in five rows (~3 ms a million rows);
 * these loops write every row and advance by its validity, with no branch. */

#define COMPRESS(type) \
    do { \
        const type *in = (const type *)values.buf; \
        type *to = (type *)out; \
        for (Py_ssize_t i = 0; i < rows; i++) { \
            to[kept] = in[i]; \
            kept += flags[i] != 0; \
        } \
    } while (0)

PyDoc_STRVAR(compress_doc,
"compress(values: buffer, itemsize: int, valid: buffer of bool) -> bytearray\n\n"
"The items (of `itemsize` bytes: 1, 2, 4 or 8) of the rows whose `valid` byte is not 0.");

static PyObject *
compress(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer values, valid;
    Py_ssize_t itemsize;
    if (!PyArg_ParseTuple(args, "y*ny*:compress", &values, &itemsize, &valid))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t rows = valid.len, kept = 0;
    const unsigned char *flags = valid.buf;
    if ((itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8) || values.len != rows * itemsize) {
        PyErr_SetString(PyExc_ValueError, "compress: an item of 1, 2, 4 or 8 bytes per validity byte");
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++)              /* vectorized: the exact size */
        kept += flags[i] != 0;
    result = PyByteArray_FromStringAndSize(NULL, (kept + 1) * itemsize);   /* + 1: the last store */
    if (result == NULL)
        goto done;
    char *out = PyByteArray_AS_STRING(result);
    kept = 0;
    Py_BEGIN_ALLOW_THREADS
    switch (itemsize) {
    case 1: COMPRESS(uint8_t); break;
    case 2: COMPRESS(uint16_t); break;
    case 4: COMPRESS(uint32_t); break;
    default: COMPRESS(uint64_t); break;
    }
    Py_END_ALLOW_THREADS
    if (PyByteArray_Resize(result, kept * itemsize) < 0)
        Py_CLEAR(result);
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&valid);
    return result;
}

PyDoc_STRVAR(split_rows_doc,
"split_rows(valid: buffer of bool, missing: bool = True) -> tuple[bytearray, bytearray]\n\n"
"The rows whose `valid` byte is not 0 (int64) and the others (uint32; none listed without\n"
"`missing`: `mask_bitmap` takes them from the bytes), each ascending.");

static PyObject *
split_rows(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer valid;
    int listed = 1;
    if (!PyArg_ParseTuple(args, "y*|p:split_rows", &valid, &listed))
        return NULL;
    PyObject *result = NULL, *present = NULL, *missing = NULL;
    Py_ssize_t rows = valid.len, kept = 0;
    const unsigned char *flags = valid.buf;
    if (rows > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "split_rows: at most 2**32 rows");
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++)
        kept += flags[i] != 0;
    present = PyByteArray_FromStringAndSize(NULL, (kept + 1) * 8);
    missing = PyByteArray_FromStringAndSize(NULL, listed ? (rows - kept + 1) * 4 : 0);
    if (present == NULL || missing == NULL)
        goto done;
    int64_t *to_present = (int64_t *)PyByteArray_AS_STRING(present);
    uint32_t *to_missing = (uint32_t *)PyByteArray_AS_STRING(missing);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0, m = 0;
    if (listed)
        for (Py_ssize_t i = 0; i < rows; i++) {
            int ok = flags[i] != 0;
            to_present[p] = i;
            to_missing[m] = (uint32_t)i;
            p += ok;
            m += !ok;
        }
    else
        for (Py_ssize_t i = 0; i < rows; i++) {
            to_present[p] = i;
            p += flags[i] != 0;
        }
    Py_END_ALLOW_THREADS
    if (PyByteArray_Resize(present, kept * 8) < 0
            || (listed && PyByteArray_Resize(missing, (rows - kept) * 4) < 0))
        goto done;
    result = Py_BuildValue("(OO)", present, missing);
done:
    Py_XDECREF(present);
    Py_XDECREF(missing);
    PyBuffer_Release(&valid);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* xxh64_each: XXH64 (seed 0) of each bytes object, the hash Paimon's bloom filter gives
 * strings and binaries (`FastHash`); the xxhash package's call per value costs ~0.3 us, more
 * than the hashing. The reference algorithm (xxhash.h's XXH64), little-endian reads. */

#define XXH_P1 0x9E3779B185EBCA87ull
#define XXH_P2 0xC2B2AE3D27D4EB4Full
#define XXH_P3 0x165667B19E3779F9ull
#define XXH_P4 0x85EBCA77C2B2AE63ull
#define XXH_P5 0x27D4EB2F165667C5ull

static inline uint64_t
rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t
read64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24
        | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline uint64_t
read32(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static inline uint64_t
xxh_round(uint64_t acc, uint64_t input)
{
    return rotl64(acc + input * XXH_P2, 31) * XXH_P1;
}

static inline uint64_t
xxh_merge(uint64_t acc, uint64_t value)
{
    return (acc ^ xxh_round(0, value)) * XXH_P1 + XXH_P4;
}

static uint64_t
xxh64(const unsigned char *p, size_t length)
{
    const unsigned char *end = p + length;
    uint64_t h;
    if (length >= 32) {
        uint64_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = (uint64_t)0 - XXH_P1;
        for (; end - p >= 32; p += 32) {
            v1 = xxh_round(v1, read64(p));
            v2 = xxh_round(v2, read64(p + 8));
            v3 = xxh_round(v3, read64(p + 16));
            v4 = xxh_round(v4, read64(p + 24));
        }
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh_merge(xxh_merge(xxh_merge(xxh_merge(h, v1), v2), v3), v4);
    }
    else
        h = XXH_P5;
    h += (uint64_t)length;
    for (; end - p >= 8; p += 8)
        h = rotl64(h ^ xxh_round(0, read64(p)), 27) * XXH_P1 + XXH_P4;
    if (end - p >= 4) {
        h = rotl64(h ^ read32(p) * XXH_P1, 23) * XXH_P2 + XXH_P3;
        p += 4;
    }
    for (; p < end; p++)
        h = rotl64(h ^ *p * XXH_P5, 11) * XXH_P1;
    h ^= h >> 33;
    h *= XXH_P2;
    h ^= h >> 29;
    h *= XXH_P3;
    h ^= h >> 32;
    return h;
}

PyDoc_STRVAR(xxh64_each_doc,
"xxh64_each(items: list[bytes]) -> bytearray\n\n"
"XXH64 (seed 0) of each item, as native int64 (Java's signed long).");

static PyObject *
xxh64_each(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items;
    if (!PyArg_ParseTuple(args, "O!:xxh64_each", &PyList_Type, &items))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(items);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, count * 8);
    if (result == NULL)
        return NULL;
    uint64_t *out = (uint64_t *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "xxh64_each: item %zd is %.100s, not bytes", i, Py_TYPE(item)->tp_name);
            Py_DECREF(result);
            return NULL;
        }
        out[i] = xxh64((const unsigned char *)PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
    }
    return result;
}

PyDoc_STRVAR(bloom_add_items_doc,
"bloom_add_items(bitset: writable buffer, values: list | numpy object array, kind: str,\n"
"                nan_is_null: bool, k: int, num_bits: int) -> tuple[int, int | None, int | None] | None\n\n"
"`bloom_add` of each non-NULL item, hashed in the same pass over the items: 's', exact strs,\n"
"XXH64 of their UTF-8; 'y', exact bytes, XXH64; 'i', exact ints within int64, Thomas Wang's\n"
"mix; 'd', exact floats (and exact ints within int64, as the nearest double), the mix of their\n"
"doubleToLongBits. NULL is None (and, but for 'd', a float NaN if `nan_is_null`). The count of\n"
"items added and, for 'i' (else None, None), their least and greatest value (the caller checks\n"
"the column type's range); None where an item is anything else, a str is not valid Unicode\n"
"(the caller's per-value path says why), or `values` is neither a list nor a one-dimensional\n"
"contiguous array of objects: the bit set may then hold some of the items' bits. 'i' declines\n"
"(setting no bit) a column whose first 4096 rows hold no NULL: typing ints in bulk and mixing\n"
"the typed array is faster than this pass over a column of few NULLs, slower over many.");

/* One item's UTF-8 (a compact ASCII str's characters are its UTF-8, read in place; any other
 * str's is made once and cached on it) or bytes: 1, 0 for anything else, -1 (no error set)
 * for a str that is not valid Unicode. */
static inline int
item_bytes(PyObject *item, int text, const char **data, Py_ssize_t *size)
{
    if (text && PyUnicode_CheckExact(item)) {
        if (PyUnicode_IS_COMPACT_ASCII(item)) {
            *data = (const char *)PyUnicode_DATA(item);
            *size = PyUnicode_GET_LENGTH(item);
            return 1;
        }
        *data = PyUnicode_AsUTF8AndSize(item, size);
        if (*data == NULL) {
            PyErr_Clear();
            return -1;
        }
        return 1;
    }
    if (!text && PyBytes_CheckExact(item)) {
        *data = PyBytes_AS_STRING(item);
        *size = PyBytes_GET_SIZE(item);
        return 1;
    }
    return 0;
}

/* One item's hash into *hash (the long FastHash mixes, for 'i' and 'd'): 1, 0 for a NULL to
 * skip (a NaN if `nan_is_null`), -1 to decline. */
static inline int
item_hash(PyObject *item, int kind, int nan_is_null, uint64_t *hash, int64_t *low, int64_t *high)
{
    if (kind == 'i') {
        int64_t value;
        if (!PyLong_CheckExact(item) || !exact_int64(item, &value))
            return nan_is_null && PyFloat_CheckExact(item) && isnan(PyFloat_AS_DOUBLE(item)) ? 0 : -1;
        *low = value < *low ? value : *low;
        *high = value > *high ? value : *high;
        *hash = (uint64_t)value;        /* mixed a block at a time (`add_all`, vectorized) */
        return 1;
    }
    if (kind == 'd') {                  /* Java's doubleToLongBits: one NaN, -0.0 apart from 0.0 */
        double value;
        int64_t integer;
        if (PyFloat_CheckExact(item))
            value = PyFloat_AS_DOUBLE(item);
        else if (PyLong_CheckExact(item) && exact_int64(item, &integer))
            value = (double)integer;
        else
            return -1;
        uint64_t bits = UINT64_C(0x7FF8000000000000);
        if (!isnan(value))
            memcpy(&bits, &value, 8);
        *hash = bits;                   /* mixed as the ints are */
        return 1;
    }
    const char *data;
    Py_ssize_t size;
    int found = item_bytes(item, kind == 's', &data, &size);
    if (found == 0)
        return nan_is_null && PyFloat_CheckExact(item) && isnan(PyFloat_AS_DOUBLE(item)) ? 0 : -1;
    if (found < 0)
        return -1;
    *hash = xxh64((const unsigned char *)data, (size_t)size);
    return 1;
}

static PyObject *
bloom_add_items(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer bitset;
    PyObject *values, **items;
    int kind, nan_is_null, k;
    long long num_bits;
    if (!PyArg_ParseTuple(args, "w*OCpiL:bloom_add_items", &bitset, &values, &kind, &nan_is_null, &k, &num_bits))
        return NULL;
    PyObject *result = NULL;
    bloom_t *bloom = NULL;
    Py_ssize_t rows, count = 0;
    if (check_bits(&bitset, k, num_bits) < 0)
        goto done;
    if (kind != 's' && kind != 'y' && kind != 'i' && kind != 'd') {
        PyErr_Format(PyExc_ValueError, "kind must be one of 's', 'y', 'i', 'd', not %c", kind);
        goto done;
    }
    int found = items_of(values, &items, &rows);
    if (found != 0) {
        result = found < 0 ? NULL : Py_NewRef(Py_None);
        goto done;
    }
    bloom = PyMem_RawMalloc(sizeof(bloom_t));
    if (bloom == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    bloom_start(bloom, bitset.buf, (uint32_t)k, (uint32_t)num_bits);
    /* a block of rows at a time: its present rows (no branch each, `present_rows`), then their
     * items, each prefetched AHEAD present items before it is read (the lines of its header
     * and of its value: a short str's characters, an int's digits, a float's double, which
     * follow the header and may lie in the next line), hashed into a block of hashes that
     * goes into the bit set whenever it is full: no array of all the hashes */
    const int mix = kind == 'i' || kind == 'd';
    const Py_ssize_t value_end = kind == 'i' ? 35 : kind == 'd' ? 23 : 63;
    Py_ssize_t present[ROW_BLOCK], filled = 0;
    uint64_t hashes[BLOCK];
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (Py_ssize_t start = 0; start < rows; start += ROW_BLOCK) {
        Py_ssize_t end = rows - start < ROW_BLOCK ? rows : start + ROW_BLOCK;
        Py_ssize_t n = present_rows(items, start, end, NULL, present);
        PyObject *const *block = n == end - start ? items + start : NULL;     /* no NULL: in place */
        if (kind == 'i' && start == 0 && block != NULL) {
            result = Py_NewRef(Py_None);        /* ints with no NULL at first: the typed pass */
            goto done;
        }
        for (Py_ssize_t j = 0; j < n; j++) {
#if defined(__GNUC__) || defined(__clang__)
            if (j + AHEAD < n) {
                const char *ahead = (const char *)(block != NULL ? block[j + AHEAD] : items[present[j + AHEAD]]);
                __builtin_prefetch(ahead);
                __builtin_prefetch(ahead + value_end);
            }
#endif
            PyObject *item = block != NULL ? block[j] : items[present[j]];
            int added = item == NULL ? -1 : item_hash(item, kind, nan_is_null, &hashes[filled], &low, &high);
            if (added < 0) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            filled += added;
            if (filled == BLOCK) {
                add_all(bloom, (const unsigned char *)hashes, filled, mix);
                count += filled;
                filled = 0;
            }
        }
    }
    add_all(bloom, (const unsigned char *)hashes, filled, mix);
    count += filled;
    if (kind == 'i' && count > 0)
        result = Py_BuildValue("(nLL)", count, (long long)low, (long long)high);
    else
        result = Py_BuildValue("(nOO)", count, Py_None, Py_None);
done:
    PyMem_RawFree(bloom);
    PyBuffer_Release(&bitset);
    return result;
}

PyDoc_STRVAR(xxh64_offsets_doc,
"xxh64_offsets(offsets: buffer, width: int, data: buffer, first: int, count: int,\n"
"              validity: buffer | None = None) -> bytearray\n\n"
"XXH64 (seed 0) of values first .. first + count - 1 of an Arrow binary/string array: value i\n"
"is data[offsets[i]:offsets[i + 1]], offsets of `width` bytes (4, or 8 for the large types).\n"
"With Arrow's validity bitmap (bit i: value i is not null), only the valid values', in order.");

static PyObject *
xxh64_offsets(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer offsets, data, validity = {0};
    Py_ssize_t width, first, count;
    PyObject *bitmap = Py_None;
    if (!PyArg_ParseTuple(args, "y*ny*nn|O:xxh64_offsets", &offsets, &width, &data, &first, &count, &bitmap))
        return NULL;
    PyObject *result = NULL;
    if (bitmap != Py_None && PyObject_GetBuffer(bitmap, &validity, PyBUF_SIMPLE) < 0)
        goto done;
    if ((width != 4 && width != 8) || first < 0 || count < 0
            || offsets.len / width < 1 || count > offsets.len / width - 1
            || first > offsets.len / width - 1 - count) {     /* no sum that could overflow */
        PyErr_SetString(PyExc_ValueError, "xxh64_offsets: offsets of 4 or 8 bytes, one past each value");
        goto done;
    }
    const unsigned char *valid = validity.buf;
    if (valid != NULL && (first + count + 7) / 8 > validity.len) {
        PyErr_SetString(PyExc_ValueError, "xxh64_offsets: the validity bitmap is shorter than the values");
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, count * 8);
    if (result == NULL)
        goto done;
    uint64_t *out = (uint64_t *)PyByteArray_AS_STRING(result);
    const unsigned char *bytes = data.buf;
    Py_ssize_t kept = 0;
    /* 64 values at a time, the valid ones found by their bits (a branch per valid value and
     * one per word, not a mispredicted one per value of a mostly NULL column) */
    for (Py_ssize_t base = first & ~(Py_ssize_t)63; base < first + count; base += 64) {
        uint64_t word = UINT64_MAX;
        if (valid != NULL) {
            Py_ssize_t at = base >> 3, left = validity.len - at;
            word = left >= 8 ? read64(valid + at) : 0;
            for (Py_ssize_t b = 0; left < 8 && b < left; b++)
                word |= (uint64_t)valid[at + b] << (8 * b);
        }
        if (base < first)
            word &= UINT64_MAX << (first - base);
        if (first + count - base < 64)
            word &= ((uint64_t)1 << (first + count - base)) - 1;
        for (; word; word &= word - 1) {
            Py_ssize_t row = base + ctz64(word);
            int64_t start, end;
            if (width == 4) {
                start = ((const int32_t *)offsets.buf)[row];
                end = ((const int32_t *)offsets.buf)[row + 1];
            }
            else {
                start = ((const int64_t *)offsets.buf)[row];
                end = ((const int64_t *)offsets.buf)[row + 1];
            }
            if (start < 0 || end < start || end > data.len) {
                PyErr_SetString(PyExc_ValueError, "xxh64_offsets: an offset lies outside the data");
                Py_CLEAR(result);
                goto done;
            }
            out[kept++] = xxh64(bytes + start, (size_t)(end - start));
        }
    }
    if (PyByteArray_Resize(result, kept * 8) < 0)
        Py_CLEAR(result);
done:
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    if (validity.obj != NULL)
        PyBuffer_Release(&validity);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* column_slices: a bit-sliced index (a BSI part, a range-bitmap's codes) straight from a
 * column, 65536 rows (one container) at a time: the rows' values decoded into a dense chunk,
 * each row's stored value kept there (the other sign's rows and NULLs hold 0) and the
 * existence bitmap's words made as it goes; then only the bits that vary within the chunk
 * are sliced (a bit every row holds copies the existence container, a bit none holds is
 * empty: a column of few or clustered values has a handful), a byte of them at a time: that
 * byte of each row into a plane, 16 rows' bits of it by a movemask each (SSE2; elsewhere a
 * multiply gathers 8 rows' bits); where 3 bytes or more vary, all bytes of 16 rows at once by
 * a transpose in registers (`slice_transposed`). A chunk wholly of the part's sign is read as
 * it is (negated in the registers), one with no row of it skipped; a chunk at most an eighth
 * non-null (a column mostly NULL) is sliced over the list of its rows (`slice_sparse`).
 * Each bitmap's containers are written as they are found; the headers, which need every
 * container's size, at the end. No pass per slice over the column. The chunk's loops are cloned for CPUs with POPCNT (GCC on x86-64
 * Linux; a wheel cannot assume it): counting bits is most of typing a container. */

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define SLICE_SSE2 1
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define POPCNT_CLONES
#endif

#define CHUNK_ROWS 65536

typedef struct {
    container_t *containers;    /* one per chunk at most */
    size_t n;
    unsigned char *data;        /* the containers' data, back to back */
    size_t used, capacity;
    int has_runs;
    size_t chunks;              /* the column's chunks: the first container's size times
                                 * them (up to 4 MiB) is the data's likely size (no copy
                                 * growing to it) */
} slice_out_t;

/* Room for `bytes` more data in `out`: 0, or -1 without memory. */
static int
slice_reserve(slice_out_t *out, size_t bytes)
{
    if (out->capacity - out->used >= bytes)
        return 0;
    size_t guess = bytes * out->chunks < ((size_t)1 << 22) ? bytes * out->chunks : (size_t)1 << 22;
    size_t grown = out->capacity ? out->capacity : guess > 16384 ? guess : 16384;
    while (grown - out->used < bytes)
        grown *= 2;
    unsigned char *larger = PyMem_RawRealloc(out->data, grown);
    if (larger == NULL)
        return -1;
    out->data = larger;
    out->capacity = grown;
    return 0;
}

/* A container's runs (run starts: a bit set whose predecessor is not). */
static inline uint32_t
slice_runs(const uint64_t *words, size_t count)
{
    uint32_t runs = 0;
    uint64_t previous = 0;
    for (size_t i = 0; i < count; i++) {
        runs += (uint32_t)__builtin_popcountll(words[i] & ~((words[i] << 1) | (previous >> 63)));
        previous = words[i];
    }
    return runs;
}

/* One container of `out` from its bitset (card > 0): 0, or -1 without memory. */
static int
slice_container(slice_out_t *out, uint16_t key, const uint64_t *words, uint32_t card, uint32_t runs)
{
    int type = dense_type(card, runs);
    container_t *c = &out->containers[out->n++];
    c->first = 0;
    c->card = card;
    c->runs = runs;
    c->key = key;
    c->type = (uint8_t)type;
    out->has_runs |= type == RUN;
    if (slice_reserve(out, container_size(c)) < 0)
        return -1;
    unsigned char *at = out->data + out->used;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (type == BITSET) {           /* the words as they are */
        memcpy(at, words, BITSET_BYTES);
        out->used += BITSET_BYTES;
        return 0;
    }
#endif
    out->used = (size_t)(write_from_bitset(words, type, runs, at) - out->data);
    return 0;
}

/* A copy of `from`'s last container into `out` (a bit every row of the chunk holds). */
static int
slice_copy_last(slice_out_t *out, const slice_out_t *from)
{
    const container_t *c = &from->containers[from->n - 1];
    size_t size = container_size(c);
    if (slice_reserve(out, size) < 0)
        return -1;
    out->containers[out->n++] = *c;
    out->has_runs |= c->type == RUN;
    memcpy(out->data + out->used, from->data + from->used - size, size);
    out->used += size;
    return 0;
}

/* A bitmap's serialization: its header (`write_header`), then its data. */
static unsigned char *
slice_write(const slice_out_t *out, unsigned char *at)
{
    at = write_header(out->containers, out->n, out->has_runs, at);
    if (out->used)
        memcpy(at, out->data, out->used);
    return at + out->used;
}

static inline size_t
slice_length(const slice_out_t *out)
{
    return header_size(out->n, out->has_runs) + out->used;
}

/* Eight slices' words (bits 8 * lane .. 8 * lane + 7 of the rows' shifted values) from the
 * plane of those bytes, one byte per row of the chunk (`words` words of 64 rows), and each
 * slice's cardinality and runs (run starts: a bit set whose predecessor is not). */
static inline void
plane_words(const unsigned char *plane, size_t words, uint64_t *bits, uint32_t *cards, uint32_t *runs)
{
    uint64_t previous[8] = {0};
    memset(cards, 0, 8 * sizeof(uint32_t));
    memset(runs, 0, 8 * sizeof(uint32_t));
    for (size_t w = 0; w < words; w++) {
        uint64_t out[8] = {0};
#ifdef SLICE_SSE2
        for (int q = 0; q < 4; q++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(plane + w * 64 + q * 16));
            for (int b = 7; b >= 0; b--) {
                out[b] |= (uint64_t)(uint32_t)_mm_movemask_epi8(x) << (16 * q);
                x = _mm_add_epi8(x, x);
            }
        }
#else
        for (int q = 0; q < 8; q++) {
            const unsigned char *p = plane + w * 64 + q * 8;
            uint64_t y = 0;
            for (int r = 0; r < 8; r++)
                y |= (uint64_t)p[r] << (8 * r);
            for (int b = 0; b < 8; b++)   /* bit r of the top byte: bit b of row r */
                out[b] |= (((y >> b) & 0x0101010101010101ull) * 0x0102040810204080ull >> 56) << (8 * q);
        }
#endif
        for (int b = 0; b < 8; b++) {
            uint64_t word = out[b];
            bits[(size_t)b * WORDS + w] = word;
            cards[b] += (uint32_t)__builtin_popcountll(word);
            runs[b] += (uint32_t)__builtin_popcountll(word & ~((word << 1) | (previous[b] >> 63)));
            previous[b] = word;
        }
    }
}

typedef struct {
    const unsigned char *values;
    int width;                  /* 1, 2, 4 or 8: signed native integers */
    const unsigned char *valid; /* a byte per row, or NULL: every row */
    const int64_t *table;       /* stored = table[value - offset], or NULL */
    Py_ssize_t table_size;
    int64_t offset;
    Py_ssize_t num_values, num_rows;
    int sign;                   /* 1: rows >= 0; -1: rows < 0, stored negated; 0: every row */
    int slices;                 /* bitmaps besides the existence bitmap (<= 64) */
} slice_job_t;

enum { SLICE_OK = 0, SLICE_NO_MEMORY = -1, SLICE_BAD_CODE = -2, SLICE_BAD_COUNT = -3 };

/* Values `k` .. `k + count - 1` of the job into `out` as int64. */
static void
slice_load(const slice_job_t *job, Py_ssize_t k, size_t count, int64_t *out)
{
    const unsigned char *at = job->values + (size_t)k * (size_t)job->width;
    switch (job->width) {
    case 1:
        for (size_t i = 0; i < count; i++)
            out[i] = ((const int8_t *)at)[i];
        break;
    case 2:
        for (size_t i = 0; i < count; i++) {
            int16_t v;
            memcpy(&v, at + 2 * i, 2);
            out[i] = v;
        }
        break;
    case 4:
        for (size_t i = 0; i < count; i++) {
            int32_t v;
            memcpy(&v, at + 4 * i, 4);
            out[i] = v;
        }
        break;
    default:
        memcpy(out, at, count * 8);
    }
}

/* A chunk of which at most 1 / SLICE_SPARSE of the rows are non-null (a column mostly NULL)
 * is sliced over the list of its part's rows rather than all 65536: the planes of their
 * compacted values give each slice's rows as bits of the list, a run start is a set bit whose
 * list predecessor is unset or not the row before it, and an array container is written from
 * the set bits' rows. */
#define SLICE_SPARSE 8

/* The varying bits' slices of a sparse chunk: its part's `card` rows (low halves, ascending)
 * in `rows` and set in `ebm`, their stored values in `values`; `plane` and `bits` as in
 * `slice_chunk`, `spare` 2 * WORDS words of scratch. SLICE_OK or SLICE_NO_MEMORY. */
POPCNT_CLONES static int
slice_sparse(uint16_t key, const uint64_t *ebm, const uint64_t *values, const uint16_t *rows, uint32_t card,
             uint64_t varying, unsigned char *plane, uint64_t *bits, uint64_t *spare, slice_out_t *outs)
{
    size_t words = (card + 63) / 64;
    uint64_t *adjacent = spare + WORDS, *bitset = spare;      /* bit i: rows[i] is rows[i - 1] + 1 */
    memset(adjacent, 0, words * sizeof(uint64_t));
    for (uint32_t i = 1; i < card; i++)
        adjacent[i / 64] |= (uint64_t)((uint32_t)rows[i] == (uint32_t)rows[i - 1] + 1) << (i % 64);
    memset(plane + card, 0, words * 64 - card);
    for (int lane = 0; lane < 64; lane += 8) {
        if (!((varying >> lane) & 0xFF))
            continue;
        for (uint32_t i = 0; i < card; i++)
            plane[i] = (unsigned char)(values[i] >> lane);
        uint32_t cards[8], dense_runs[8];
        plane_words(plane, words, bits, cards, dense_runs);
        for (int b = 0; b < 8; b++) {
            if (!((varying >> (lane + b)) & 1))
                continue;
            const uint64_t *slice = bits + (size_t)b * WORDS;
            uint32_t runs = 0;
            uint64_t previous = 0;
            for (size_t w = 0; w < words; w++) {
                uint64_t follows = ((slice[w] << 1) | (previous >> 63)) & adjacent[w];   /* its row before set */
                runs += (uint32_t)__builtin_popcountll(slice[w] & ~follows);
                previous = slice[w];
            }
            slice_out_t *out = &outs[1 + lane + b];
            int type = dense_type(cards[b], runs);
            if (type != ARRAY) {
                /* the slice's rows set in an empty bitset, or (when they are most of the
                 * part's) the others cleared from the existence bitset: a word's bits
                 * gathered in a register, stored as they grow (the rows ascend) */
                int most = 2 * cards[b] > card;
                uint64_t flip = most ? UINT64_MAX : 0, gathered = 0;
                uint32_t at = UINT32_MAX;
                if (most)
                    memcpy(bitset, ebm, WORDS * sizeof(uint64_t));
                else
                    memset(bitset, 0, WORDS * sizeof(uint64_t));
                for (size_t w = 0; w < words; w++) {
                    uint64_t x = slice[w] ^ flip;
                    if (w == words - 1 && card % 64)
                        x &= ((uint64_t)1 << (card % 64)) - 1;
                    for (; x; x &= x - 1) {
                        uint32_t row = rows[w * 64 + (size_t)ctz64(x)];
                        uint64_t bit = (uint64_t)1 << (row & 63);
                        gathered = (row >> 6 == at ? gathered : 0) | bit;
                        at = row >> 6;
                        bitset[at] = most ? ebm[at] & ~gathered : gathered;
                    }
                }
                if (slice_container(out, key, bitset, cards[b], runs) < 0)
                    return SLICE_NO_MEMORY;
                continue;
            }
            container_t *c = &out->containers[out->n++];
            c->first = 0;
            c->card = cards[b];
            c->runs = runs;
            c->key = key;
            c->type = ARRAY;
            if (slice_reserve(out, 2 * (size_t)cards[b]) < 0)
                return SLICE_NO_MEMORY;
            unsigned char *at = out->data + out->used;
            for (size_t w = 0; w < words; w++)
                for (uint64_t x = slice[w]; x; x &= x - 1, at += 2)
                    put16(at, rows[w * 64 + (size_t)ctz64(x)]);
            out->used += 2 * (size_t)cards[b];
        }
    }
    return SLICE_OK;
}

#if defined(SLICE_SSE2) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Values whose varying bits span two bytes or more are sliced 16 rows at a time: their eight
 * bytes transposed in registers (rows' bytes of each lane side by side: four rounds of
 * unpacks), each varying lane's 8 bits of 64 rows then taken by movemasks into the slices'
 * words. One pass over the stored values, where the plane of each lane was one pass each. */
#define SLICE_TRANSPOSE 1
#define SLICE_STRIDE (WORDS + 8)       /* a slice's words apart: not all in one cache set */

/* Lane L of `y`: byte L of the 16 values at `values` (`negated`: of their negations), in row order. */
static inline void
transpose16(const uint64_t *values, int negated, __m128i *y)
{
    __m128i p[8], q[8], r[8];
    for (int i = 0; i < 8; i++) {       /* 16-bit word L: byte L of rows 2i, 2i + 1 */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(values + 2 * i));
        if (negated)
            v = _mm_sub_epi64(_mm_setzero_si128(), v);
        p[i] = _mm_unpacklo_epi8(v, _mm_unpackhi_epi64(v, v));
    }
    for (int i = 0; i < 4; i++) {       /* 32-bit word: a lane's byte of 4 rows */
        q[2 * i] = _mm_unpacklo_epi16(p[2 * i], p[2 * i + 1]);
        q[2 * i + 1] = _mm_unpackhi_epi16(p[2 * i], p[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {       /* 64-bit word: a lane's byte of 8 rows */
        r[4 * h] = _mm_unpacklo_epi32(q[4 * h], q[4 * h + 2]);
        r[4 * h + 1] = _mm_unpackhi_epi32(q[4 * h], q[4 * h + 2]);
        r[4 * h + 2] = _mm_unpacklo_epi32(q[4 * h + 1], q[4 * h + 3]);
        r[4 * h + 3] = _mm_unpackhi_epi32(q[4 * h + 1], q[4 * h + 3]);
    }
    for (int i = 0; i < 4; i++) {
        y[2 * i] = _mm_unpacklo_epi64(r[i], r[i + 4]);
        y[2 * i + 1] = _mm_unpackhi_epi64(r[i], r[i + 4]);
    }
}

/* The varying bits' slices of a dense chunk from `stored` (`span` values, or their negations
 * if `negated`; the rows after them are 0), through `bits` (64 * SLICE_STRIDE words: slice
 * i's words at i * SLICE_STRIDE). SLICE_OK or SLICE_NO_MEMORY. */
POPCNT_CLONES static int
slice_transposed(uint16_t key, const uint64_t *stored, size_t span, int negated, uint64_t varying,
                 uint64_t *bits, slice_out_t *outs)
{
    size_t words = (span + 63) / 64;
    uint32_t cards[64] = {0}, runs[64] = {0};
    uint64_t previous[64] = {0};
    for (size_t w = 0; w < words; w++) {
        __m128i y[4][8];
        for (int g = 0; g < 4; g++) {
            uint64_t tail[16];
            size_t first = 64 * w + 16 * (size_t)g;
            const uint64_t *at = stored + first;
            if (first + 16 > span) {        /* the last rows, padded with 0 */
                memset(tail, 0, sizeof(tail));
                if (span > first)
                    memcpy(tail, at, (span - first) * sizeof(uint64_t));
                at = tail;
            }
            transpose16(at, negated, y[g]);
        }
        for (int lane = 0; lane < 8; lane++) {
            if (!((varying >> (8 * lane)) & 0xFF))
                continue;
            __m128i x0 = y[0][lane], x1 = y[1][lane], x2 = y[2][lane], x3 = y[3][lane];
            for (int b = 8 * lane + 7; b >= 8 * lane; b--) {
                uint64_t word = (uint64_t)(uint32_t)_mm_movemask_epi8(x0)
                                | (uint64_t)(uint32_t)_mm_movemask_epi8(x1) << 16
                                | (uint64_t)(uint32_t)_mm_movemask_epi8(x2) << 32
                                | (uint64_t)(uint32_t)_mm_movemask_epi8(x3) << 48;
                bits[(size_t)b * SLICE_STRIDE + w] = word;
                cards[b] += (uint32_t)__builtin_popcountll(word);
                runs[b] += (uint32_t)__builtin_popcountll(word & ~((word << 1) | (previous[b] >> 63)));
                previous[b] = word;
                x0 = _mm_add_epi8(x0, x0);
                x1 = _mm_add_epi8(x1, x1);
                x2 = _mm_add_epi8(x2, x2);
                x3 = _mm_add_epi8(x3, x3);
            }
        }
    }
    for (uint64_t left = varying; left; left &= left - 1) {
        int b = ctz64(left);
        uint64_t *slice = bits + (size_t)b * SLICE_STRIDE;
        if (words < WORDS)
            memset(slice + words, 0, (WORDS - words) * sizeof(uint64_t));
        if (slice_container(&outs[1 + b], key, slice, cards[b], runs[b]) < 0)
            return SLICE_NO_MEMORY;
    }
    return SLICE_OK;
}
#endif

/* One chunk (rows `start` .. `start + span - 1`, the job's values from `*k` on) into `outs`. */
POPCNT_CLONES static int
slice_chunk(const slice_job_t *job, Py_ssize_t start, size_t span, Py_ssize_t *k, int64_t *decoded, uint64_t *dense,
            uint64_t *ebm, uint64_t *bits, unsigned char *plane, uint16_t *rows, uint64_t *spare, slice_out_t *outs,
            uint64_t *ored, Py_ssize_t *total)
{
    size_t words = (span + 63) / 64;
    const uint64_t *stored = dense;                 /* each row's stored value, 0 outside the part */
    uint64_t all = UINT64_MAX, any = 0;             /* the part's stored values ANDed, ORed */
    uint32_t card = 0;
    int sparse = 0;                                 /* the part's rows listed in `rows`, values in `decoded` */
    const uint64_t *direct = NULL;                  /* or each row's value, as it is (or `negated`) */
    int negated = 0, lane0 = 0;                     /* lane0: `plane` holds the stored values' low bytes */
    memset(ebm, 0, WORDS * sizeof(uint64_t));
    if (job->valid != NULL) {
        /* NULLs: the valid rows' words (8 bool bytes gathered by a multiply), their values
         * loaded at once, then each word's valid rows placed */
        const unsigned char *valid = job->valid + start;
        size_t present = 0;
        for (size_t w = 0; w < words; w++) {
            size_t rows = span - 64 * w >= 64 ? 64 : span - 64 * w;
            uint64_t have = 0;
            for (size_t j = 0; j + 8 <= rows; j += 8) {
                uint64_t y;
                memcpy(&y, valid + 64 * w + j, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                y = __builtin_bswap64(y);
#endif
                have |= ((y & 0x0101010101010101ull) * 0x0102040810204080ull >> 56) << j;
            }
            for (size_t j = rows & ~(size_t)7; j < rows; j++)
                have |= (uint64_t)(valid[64 * w + j] & 1) << j;
            ebm[w] = have;
            present += (size_t)__builtin_popcountll(have);
        }
        if (job->num_values - *k < (Py_ssize_t)present)
            return SLICE_BAD_COUNT;
        slice_load(job, *k, present, decoded);
        *k += (Py_ssize_t)present;
        const int64_t *next = decoded;
        sparse = present * SLICE_SPARSE <= span;
        if (sparse) {
            /* the part's rows and stored values listed, compacted in place over the loaded
             * ones (a value is written at or before where it was read) */
            uint64_t *compact = (uint64_t *)decoded;
            for (size_t w = 0; w < words; w++) {
                uint64_t word = 0;
                for (uint64_t left = ebm[w]; left; left &= left - 1) {
                    int64_t v = *next++;
                    if (job->table != NULL) {
                        uint64_t at = (uint64_t)v - (uint64_t)job->offset;
                        if (at >= (uint64_t)job->table_size)
                            return SLICE_BAD_CODE;
                        v = job->table[at];
                    }
                    uint32_t in = job->sign == 0 || (job->sign > 0) == (v >= 0);
                    uint64_t s = job->sign < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, mask = (uint64_t)0 - in;
                    int j = ctz64(left);
                    rows[card] = (uint16_t)(64 * w + (size_t)j);
                    compact[card] = s;
                    card += in;
                    word |= (uint64_t)in << j;
                    all &= s | ~mask;
                    any |= s & mask;
                }
                ebm[w] = word;
            }
        }
        else {
            for (size_t w = 0; w < words; w++) {
                uint64_t *out = dense + 64 * w, word = 0;
                memset(out, 0, 64 * sizeof(uint64_t));
                for (uint64_t left = ebm[w]; left; left &= left - 1) {
                    int64_t v = *next++;
                    if (job->table != NULL) {
                        uint64_t at = (uint64_t)v - (uint64_t)job->offset;
                        if (at >= (uint64_t)job->table_size)
                            return SLICE_BAD_CODE;
                        v = job->table[at];
                    }
                    int in = job->sign == 0 || (job->sign > 0) == (v >= 0);
                    uint64_t s = job->sign < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
                    if (in) {
                        int j = ctz64(left);
                        out[j] = s;
                        word |= (uint64_t)1 << j;
                        all &= s;
                        any |= s;
                    }
                }
                ebm[w] = word;
                card += (uint32_t)__builtin_popcountll(word);
            }
            for (size_t r = 0; r < span; r++)
                plane[r] = (unsigned char)dense[r];
            lane0 = 1;
        }
    }
    else {
        if (job->num_values - *k < (Py_ssize_t)span)
            return SLICE_BAD_COUNT;
        const int64_t *values = decoded;            /* in place where they are int64 already */
        if (job->width == 8 && job->table == NULL && (uintptr_t)job->values % 8 == 0)
            values = (const int64_t *)(const void *)job->values + *k;
        else
            slice_load(job, *k, span, decoded);
        *k += (Py_ssize_t)span;
        if (job->table != NULL && job->sign != 0)
            /* a part of one sign of the stored values: the table's, in place, before its tests */
            for (size_t r = 0; r < span; r++) {
                uint64_t at = (uint64_t)decoded[r] - (uint64_t)job->offset;
                if (at >= (uint64_t)job->table_size)
                    return SLICE_BAD_CODE;
                decoded[r] = job->table[at];
            }
        int whole = job->sign == 0;                 /* every row in the part */
        if (job->sign != 0) {
            /* a part of one sign: its rows all (their stored values ANDed and ORed on the
             * way), none, or some (found at the first block of both signs) */
            uint64_t both = UINT64_MAX, either = 0, and_ = UINT64_MAX, or_ = 0;
            uint64_t negate = job->sign < 0 ? UINT64_MAX : 0;
            for (size_t r = 0; r < span && (int64_t)(~both & either) >= 0; r += 256) {
                size_t end = span - r < 256 ? span : r + 256;
                for (size_t i = r; i < end; i++) {
                    uint64_t v = (uint64_t)values[i], s = (v ^ negate) - negate;
                    both &= v;
                    either |= v;
                    and_ &= s;
                    or_ |= s;
                }
            }
            if ((job->sign > 0 && (int64_t)either >= 0) || (job->sign < 0 && (int64_t)both < 0)) {
                whole = 1;
                all = and_;
                any = or_;
                direct = (const uint64_t *)values;
                negated = job->sign < 0;
            }
            else if ((job->sign > 0 && (int64_t)both < 0) || (job->sign < 0 && (int64_t)either >= 0))
                return SLICE_OK;                    /* no row of the part */
        }
        else if (job->table != NULL) {
            for (size_t r = 0; r < span; r++) {
                uint64_t at = (uint64_t)values[r] - (uint64_t)job->offset;
                if (at >= (uint64_t)job->table_size)
                    return SLICE_BAD_CODE;
                uint64_t s = (uint64_t)job->table[at];
                dense[r] = s;
                all &= s;
                any |= s;
                plane[r] = (unsigned char)s;
            }
            lane0 = 1;
        }
        else {
            direct = (const uint64_t *)values;
            for (size_t r = 0; r < span; r++) {
                uint64_t s = (uint64_t)values[r];
                all &= s;
                any |= s;
            }
        }
        if (whole) {
            for (size_t w = 0; w < words; w++)
                ebm[w] = span - 64 * w >= 64 ? UINT64_MAX : (((uint64_t)1 << (span - 64 * w)) - 1);
            card = (uint32_t)span;
        }
        else {
            uint64_t flip = job->sign > 0 ? UINT64_MAX : 0;    /* in the part: v < 0, or v >= 0 */
            for (size_t w = 0; w < words; w++) {
                size_t rows = span - 64 * w >= 64 ? 64 : span - 64 * w;
                const int64_t *v = values + 64 * w;
                uint64_t *out = dense + 64 * w, word = 0;
                unsigned char *low = plane + 64 * w;
                for (size_t j = 0; j < rows; j++) {         /* constant shifts: no carried shift by j */
                    uint64_t negative = (uint64_t)0 - ((uint64_t)v[j] >> 63);
                    uint64_t mask = negative ^ flip;
                    uint64_t s = (((uint64_t)v[j] ^ negative) - negative) & mask;     /* |v| */
                    out[j] = s;
                    low[j] = (unsigned char)s;
                    word = (word >> 1) | (mask << 63);
                    all &= s | ~mask;
                    any |= s;
                }
                ebm[w] = word >> (64 - rows);
                card += (uint32_t)__builtin_popcountll(ebm[w]);
            }
            lane0 = 1;
        }
    }
    if (!card)
        return SLICE_OK;
    *ored |= any;
    *total += card;
    uint16_t key = (uint16_t)(start >> 16);
    if (slice_container(&outs[0], key, ebm, card, slice_runs(ebm, words)) < 0)
        return SLICE_NO_MEMORY;
    uint64_t keep = job->slices >= 64 ? UINT64_MAX : (((uint64_t)1 << job->slices) - 1);
    all &= keep;
    any &= keep;
    for (uint64_t ones = all; ones; ones &= ones - 1)        /* the bits every row holds */
        if (slice_copy_last(&outs[1 + ctz64(ones)], &outs[0]) < 0)
            return SLICE_NO_MEMORY;
    uint64_t varying = all ^ any;
    if (sparse)
        return slice_sparse(key, ebm, (const uint64_t *)decoded, rows, card, varying, plane, bits, spare, outs);
#ifdef SLICE_TRANSPOSE
    int lanes = 0;
    for (int lane = 0; lane < 64; lane += 8)
        lanes += ((varying >> lane) & 0xFF) != 0;
    if (lanes >= 3)
        return slice_transposed(key, direct != NULL ? direct : stored, span, direct != NULL && negated, varying,
                                bits, outs);
#endif
    if (direct != NULL && !negated)
        stored = direct;
    for (int lane = 0; lane < 64; lane += 8) {
        if (!((varying >> lane) & 0xFF))
            continue;
        if (direct != NULL && negated)                      /* the stored values: the negations */
            for (size_t r = 0; r < span; r++)
                plane[r] = (unsigned char)(((uint64_t)0 - direct[r]) >> lane);
        else if (lane || !lane0)                            /* lane 0: filled above, if it was */
            for (size_t r = 0; r < span; r++)
                plane[r] = (unsigned char)(stored[r] >> lane);
        memset(plane + span, 0, words * 64 - span);
        uint32_t cards[8], runs[8];
        plane_words(plane, words, bits, cards, runs);
        for (int b = 0; b < 8; b++) {
            if (!((varying >> (lane + b)) & 1))
                continue;
            uint64_t *slice = bits + (size_t)b * WORDS;
            if (words < WORDS)
                memset(slice + words, 0, (WORDS - words) * sizeof(uint64_t));
            if (slice_container(&outs[1 + lane + b], key, slice, cards[b], runs[b]) < 0)
                return SLICE_NO_MEMORY;
        }
    }
    return SLICE_OK;
}

/* The job's bitmaps into `outs` (the existence bitmap, then the slices): SLICE_OK or an error;
 * `*ored` and `*rows`: the stored values ORed (their bits) and the part's rows. Without the GIL. */
static int
slice_column(const slice_job_t *job, slice_out_t *outs, uint64_t *ored, Py_ssize_t *rows)
{
    int64_t *decoded = PyMem_RawMalloc(CHUNK_ROWS * sizeof(int64_t));
    uint64_t *dense = PyMem_RawMalloc(CHUNK_ROWS * sizeof(uint64_t));
    uint64_t *ebm = PyMem_RawMalloc(WORDS * sizeof(uint64_t));
    uint64_t *bits = PyMem_RawMalloc(64 * (WORDS + 8) * sizeof(uint64_t));     /* slice_transposed's */
    unsigned char *plane = PyMem_RawMalloc(CHUNK_ROWS);
    uint16_t *rows16 = PyMem_RawMalloc(CHUNK_ROWS * sizeof(uint16_t));
    uint64_t *spare = PyMem_RawMalloc(2 * WORDS * sizeof(uint64_t));
    int status = SLICE_NO_MEMORY;
    Py_ssize_t k = 0, total = 0;
    uint64_t any = 0;
    if (decoded == NULL || dense == NULL || ebm == NULL || bits == NULL || plane == NULL || rows16 == NULL
            || spare == NULL)
        goto done;
    status = SLICE_OK;
    for (Py_ssize_t start = 0; start < job->num_rows && status == SLICE_OK; start += CHUNK_ROWS) {
        size_t span = (size_t)(job->num_rows - start < CHUNK_ROWS ? job->num_rows - start : CHUNK_ROWS);
        status = slice_chunk(job, start, span, &k, decoded, dense, ebm, bits, plane, rows16, spare, outs, &any, &total);
    }
    if (status == SLICE_OK && k != job->num_values)
        status = SLICE_BAD_COUNT;
    *ored = any;
    *rows = total;
done:
    PyMem_RawFree(decoded);
    PyMem_RawFree(dense);
    PyMem_RawFree(ebm);
    PyMem_RawFree(bits);
    PyMem_RawFree(plane);
    PyMem_RawFree(rows16);
    PyMem_RawFree(spare);
    return status;
}

PyDoc_STRVAR(column_slices_doc,
"column_slices(values: buffer, width: int, valid: buffer | None, table: buffer | None, offset: int,\n"
"              sign: int, count: int, prefix: buffer = ..., suffix: buffer = ...)\n"
"    -> tuple[bytes, bytes, bytearray, int]\n\n"
"A bit-sliced index of a column: `values` holds the non-null rows' values (signed integers of\n"
"`width` bytes: 1, 2, 4 or 8), `valid` a bool byte (0 or 1) per row (None: every row is\n"
"non-null); with `table` (int64) a row stores table[value - offset]. The part's rows: sign 1\n"
"those >= 0, -1 those < 0 (stored negated), 0 all. Returns the existence bitmap and the\n"
"`count` slices (-1: as many as the largest stored value has bits), run-optimized and\n"
"serialized (the slices back to back), each slice's length (int64) and the part's rows. With\n"
"`prefix` (and `suffix`), the first item is empty and the second one blob: the prefix, the\n"
"existence bitmap, the slice count (int32, big-endian), the slices, the suffix (a BSI part).");

PyDoc_STRVAR(value_presence_doc,
"value_presence(values: buffer, width: int, low: int, span: int) -> bytearray\n\n"
"Which of the values low .. low + span - 1 occur in `values` (signed integers of `width`\n"
"bytes): a byte 0 or 1 each; ValueError for a value outside them.");

static PyObject *
value_presence(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer values;
    int width;
    long long low;
    Py_ssize_t span;
    if (!PyArg_ParseTuple(args, "y*iLn:value_presence", &values, &width, &low, &span))
        return NULL;
    PyObject *result = NULL;
    if ((width != 1 && width != 2 && width != 4 && width != 8) || values.len % width != 0 || span < 0) {
        PyErr_SetString(PyExc_ValueError, "value_presence: values of 1, 2, 4 or 8 bytes and a span >= 0");
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, span);
    if (result == NULL)
        goto done;
    unsigned char *seen = (unsigned char *)PyByteArray_AS_STRING(result);
    slice_job_t job = {values.buf, width, NULL, NULL, 0, 0, values.len / width, values.len / width, 0, 0};
    int64_t block[512];
    int outside = 0;
    Py_BEGIN_ALLOW_THREADS
    memset(seen, 0, (size_t)span);
    for (Py_ssize_t k = 0; k < job.num_values && !outside; k += 512) {
        size_t count = job.num_values - k < 512 ? (size_t)(job.num_values - k) : 512;
        slice_load(&job, k, count, block);
        for (size_t i = 0; i < count; i++) {
            uint64_t at = (uint64_t)block[i] - (uint64_t)low;
            if (at >= (uint64_t)span) {
                outside = 1;
                break;
            }
            seen[at] = 1;
        }
    }
    Py_END_ALLOW_THREADS
    if (outside) {
        PyErr_SetString(PyExc_ValueError, "value_presence: a value lies outside low .. low + span - 1");
        Py_CLEAR(result);
    }
done:
    PyBuffer_Release(&values);
    return result;
}

static PyObject *
column_slices(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer values, valid = {0}, table = {0};
    PyObject *valid_object, *table_object;
    int width, sign, count;
    Py_buffer prefix = {0}, suffix = {0};
    long long offset;
    if (!PyArg_ParseTuple(args, "y*iOOLii|y*y*:column_slices", &values, &width, &valid_object, &table_object,
                          &offset, &sign, &count, &prefix, &suffix))
        return NULL;
    PyObject *result = NULL, *ebm = NULL, *blob = NULL, *lengths = NULL;
    slice_out_t outs[65], empty = {0};
    memset(outs, 0, sizeof(outs));
    if (valid_object != Py_None && PyObject_GetBuffer(valid_object, &valid, PyBUF_SIMPLE) < 0)
        goto done;
    if (table_object != Py_None && PyObject_GetBuffer(table_object, &table, PyBUF_SIMPLE) < 0)
        goto done;
    if ((width != 1 && width != 2 && width != 4 && width != 8) || values.len % width != 0
            || table.len % 8 != 0 || sign < -1 || sign > 1 || count < -1) {
        PyErr_SetString(PyExc_ValueError, "column_slices: values of 1, 2, 4 or 8 bytes, an int64 table, "
                        "a sign in -1..1 and a count >= -1");
        goto done;
    }
    slice_job_t job = {values.buf, width, valid.buf, table.buf, table.len / 8, (int64_t)offset, values.len / width,
                       valid.buf != NULL ? valid.len : values.len / width, sign, count < 0 || count > 64 ? 64 : count};
    if (job.num_rows >= ((Py_ssize_t)1 << 32)) {
        PyErr_SetString(PyExc_ValueError, "column_slices: at most 2**32 rows");
        goto done;
    }
    size_t chunks = (size_t)((job.num_rows + CHUNK_ROWS - 1) / CHUNK_ROWS);
    for (int i = 0; i <= job.slices; i++) {
        outs[i].containers = PyMem_RawMalloc((chunks ? chunks : 1) * sizeof(container_t));
        outs[i].chunks = chunks;
        if (outs[i].containers == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    uint64_t ored = 0;
    Py_ssize_t rows = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = slice_column(&job, outs, &ored, &rows);
    Py_END_ALLOW_THREADS
    if (status != SLICE_OK) {
        if (status == SLICE_NO_MEMORY)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, status == SLICE_BAD_CODE ? "column_slices: a value lies outside the table"
                            : "column_slices: not one value per valid row");
        goto done;
    }
    int slices = count >= 0 ? count : 0;
    if (count < 0)
        for (uint64_t m = ored; m; m >>= 1)
            slices++;
    size_t total = 0;
    for (int i = 0; i < slices; i++)
        total += i < job.slices ? slice_length(&outs[1 + i]) : 8;
    lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)slices * 8);
    if (prefix.obj != NULL) {       /* framed: one blob, no copy of the slices by the caller */
        ebm = PyBytes_FromStringAndSize(NULL, 0);
        blob = PyBytes_FromStringAndSize(NULL, prefix.len + (Py_ssize_t)slice_length(&outs[0]) + 4
                                         + (Py_ssize_t)total + suffix.len);
    }
    else {
        ebm = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)slice_length(&outs[0]));
        blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    }
    if (lengths == NULL || ebm == NULL || blob == NULL)
        goto done;
    int64_t *length_data = (int64_t *)PyByteArray_AS_STRING(lengths);
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(blob);
    if (prefix.obj != NULL) {
        memcpy(at, prefix.buf, (size_t)prefix.len);
        at = slice_write(&outs[0], at + prefix.len);
        at[0] = (unsigned char)(slices >> 24);          /* the slice count, big-endian */
        at[1] = (unsigned char)(slices >> 16);
        at[2] = (unsigned char)(slices >> 8);
        at[3] = (unsigned char)slices;
        at += 4;
    }
    else
        slice_write(&outs[0], (unsigned char *)PyBytes_AS_STRING(ebm));
    for (int i = 0; i < slices; i++) {
        unsigned char *from = at;
        at = slice_write(i < job.slices ? &outs[1 + i] : &empty, at);    /* past 64: empty */
        length_data[i] = at - from;
    }
    if (prefix.obj != NULL && suffix.len)
        memcpy(at, suffix.buf, (size_t)suffix.len);
    result = Py_BuildValue("(OOOn)", ebm, blob, lengths, rows);
done:
    for (int i = 0; i < 65; i++) {
        PyMem_RawFree(outs[i].containers);
        PyMem_RawFree(outs[i].data);
    }
    Py_XDECREF(ebm);
    Py_XDECREF(blob);
    Py_XDECREF(lengths);
    PyBuffer_Release(&values);
    if (valid.obj != NULL)
        PyBuffer_Release(&valid);
    if (table.obj != NULL)
        PyBuffer_Release(&table);
    if (prefix.obj != NULL)
        PyBuffer_Release(&prefix);
    if (suffix.obj != NULL)
        PyBuffer_Release(&suffix);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* java_map_replay: java.util.HashMap's tree bins, replayed (`javaorder.JavaHashMap`).
 *
 * Keys whose hashes crowd one bucket (doubles with short mantissas: `Double.hashCode` xors
 * the bits' halves, so 0.5 steps share most hash bits) turn bins into red-black trees, whose
 * `next` chains are what Java iterates. `javaorder._bulk_order` replays exactly those keys, in
 * order, on the real map's resize timeline; in Python that replay was most of a bitmap build
 * over 100k sorted doubles. This is the same replay step for step (HashMap.java: putVal /
 * computeIfAbsent, treeifyBin, TreeNode.treeify/putTreeVal/split/balanceInsertion,
 * moveRootToFront), nodes as indices; `compareTo` is given as one int64 rank per key. */

typedef struct {
    int32_t *next, *prev, *parent, *left, *right, *tab;
    char *red, *tree;
    const int32_t *hash;
    const int64_t *rank;
    int64_t capacity;
} jmap_t;

#define JMAP_TREEIFY 8
#define JMAP_UNTREEIFY 6
#define JMAP_MIN_TREEIFY 64

static int32_t
jmap_rotate_left(jmap_t *m, int32_t root, int32_t p)
{
    int32_t r = m->right[p];
    if (r >= 0) {
        int32_t rl = m->right[p] = m->left[r];
        if (rl >= 0)
            m->parent[rl] = p;
        int32_t pp = m->parent[r] = m->parent[p];
        if (pp < 0) {
            root = r;
            m->red[r] = 0;
        }
        else if (m->left[pp] == p)
            m->left[pp] = r;
        else
            m->right[pp] = r;
        m->left[r] = p;
        m->parent[p] = r;
    }
    return root;
}

static int32_t
jmap_rotate_right(jmap_t *m, int32_t root, int32_t p)
{
    int32_t l = m->left[p];
    if (l >= 0) {
        int32_t lr = m->left[p] = m->right[l];
        if (lr >= 0)
            m->parent[lr] = p;
        int32_t pp = m->parent[l] = m->parent[p];
        if (pp < 0) {
            root = l;
            m->red[l] = 0;
        }
        else if (m->right[pp] == p)
            m->right[pp] = l;
        else
            m->left[pp] = l;
        m->right[l] = p;
        m->parent[p] = l;
    }
    return root;
}

static int32_t
jmap_balance_insertion(jmap_t *m, int32_t root, int32_t x)
{
    m->red[x] = 1;
    for (;;) {
        int32_t xp = m->parent[x], xpp, xppl, xppr;
        if (xp < 0) {
            m->red[x] = 0;
            return x;
        }
        xpp = m->parent[xp];
        if (!m->red[xp] || xpp < 0)
            return root;
        xppl = m->left[xpp];
        if (xp == xppl) {
            xppr = m->right[xpp];
            if (xppr >= 0 && m->red[xppr]) {
                m->red[xppr] = 0;
                m->red[xp] = 0;
                m->red[xpp] = 1;
                x = xpp;
            }
            else {
                if (x == m->right[xp]) {
                    x = xp;
                    root = jmap_rotate_left(m, root, x);
                    xp = m->parent[x];
                    xpp = xp < 0 ? -1 : m->parent[xp];
                }
                if (xp >= 0) {
                    m->red[xp] = 0;
                    if (xpp >= 0) {
                        m->red[xpp] = 1;
                        root = jmap_rotate_right(m, root, xpp);
                    }
                }
            }
        }
        else {
            if (xppl >= 0 && m->red[xppl]) {
                m->red[xppl] = 0;
                m->red[xp] = 0;
                m->red[xpp] = 1;
                x = xpp;
            }
            else {
                if (x == m->left[xp]) {
                    x = xp;
                    root = jmap_rotate_right(m, root, x);
                    xp = m->parent[x];
                    xpp = xp < 0 ? -1 : m->parent[xp];
                }
                if (xp >= 0) {
                    m->red[xp] = 0;
                    if (xpp >= 0) {
                        m->red[xpp] = 1;
                        root = jmap_rotate_left(m, root, xpp);
                    }
                }
            }
        }
    }
}

static void
jmap_move_root_to_front(jmap_t *m, int32_t root)
{
    int64_t index = (uint32_t)m->hash[root] & (uint64_t)(m->capacity - 1);
    int32_t first = m->tab[index];
    if (root != first) {
        m->tab[index] = root;
        int32_t rp = m->prev[root], rn = m->next[root];
        if (rn >= 0)
            m->prev[rn] = rp;
        if (rp >= 0)
            m->next[rp] = rn;
        m->prev[first] = root;
        m->next[root] = first;
        m->prev[root] = -1;
    }
}

/* Tree order of x against p: hashes (signed), then `compareTo` (distinct keys: never 0). */
static inline int
jmap_direction(const jmap_t *m, int32_t x, int32_t p)
{
    int32_t h = m->hash[x], ph = m->hash[p];
    if (ph != h)
        return ph > h ? -1 : 1;
    return m->rank[x] < m->rank[p] ? -1 : 1;
}

static void
jmap_treeify(jmap_t *m, int32_t head)
{
    int32_t root = -1;
    for (int32_t x = head, nxt; x >= 0; x = nxt) {
        nxt = m->next[x];
        m->left[x] = m->right[x] = -1;
        if (root < 0) {
            m->parent[x] = -1;
            m->red[x] = 0;
            root = x;
            continue;
        }
        for (int32_t p = root;;) {
            int dir = jmap_direction(m, x, p);
            int32_t child = dir <= 0 ? m->left[p] : m->right[p];
            if (child < 0) {
                m->parent[x] = p;
                if (dir <= 0)
                    m->left[p] = x;
                else
                    m->right[p] = x;
                root = jmap_balance_insertion(m, root, x);
                break;
            }
            p = child;
        }
    }
    jmap_move_root_to_front(m, root);
}

static void
jmap_put_tree_val(jmap_t *m, int32_t first, int32_t x)
{
    int32_t root = first;
    while (m->parent[root] >= 0)
        root = m->parent[root];
    for (int32_t p = root;;) {
        int dir = jmap_direction(m, x, p);
        int32_t child = dir <= 0 ? m->left[p] : m->right[p];
        if (child < 0) {
            int32_t xpn = m->next[p];
            m->next[x] = xpn;
            m->left[x] = m->right[x] = -1;
            m->tree[x] = 1;
            m->red[x] = 0;
            if (dir <= 0)
                m->left[p] = x;
            else
                m->right[p] = x;
            m->next[p] = x;
            m->parent[x] = m->prev[x] = p;
            if (xpn >= 0)
                m->prev[xpn] = x;
            jmap_move_root_to_front(m, jmap_balance_insertion(m, root, x));
            return;
        }
        p = child;
    }
}

/* Doubles the table (0: allocates 16 buckets), splitting each bin into lo and hi in order. */
static int
jmap_resize(jmap_t *m)
{
    int64_t old_cap = m->capacity, cap = old_cap ? old_cap * 2 : 16;
    int32_t *tab = PyMem_RawMalloc((size_t)cap * sizeof(int32_t)), *old = m->tab;
    if (tab == NULL)
        return -1;
    for (int64_t j = 0; j < cap; j++)
        tab[j] = -1;
    m->tab = tab;
    m->capacity = cap;
    for (int64_t j = 0; j < old_cap; j++) {
        int32_t first = old[j];
        if (first < 0)
            continue;
        int32_t heads[2] = {-1, -1}, tails[2] = {-1, -1}, sizes[2] = {0, 0};
        for (int32_t e = first; e >= 0; e = m->next[e]) {
            int half = ((uint32_t)m->hash[e] & (uint64_t)old_cap) != 0;
            if (tails[half] < 0)
                heads[half] = e;
            else
                m->next[tails[half]] = e;
            m->prev[e] = tails[half];
            tails[half] = e;
            sizes[half]++;
        }
        int is_tree = m->tree[first];
        for (int half = 0; half < 2; half++) {
            if (heads[half] < 0)
                continue;
            m->next[tails[half]] = -1;
            tab[j + half * old_cap] = heads[half];
            if (!is_tree)
                continue;
            if (sizes[half] <= JMAP_UNTREEIFY) {        /* untreeify: a plain chain */
                for (int32_t e = heads[half]; e >= 0; e = m->next[e])
                    m->tree[e] = 0;
            }
            else if (heads[0] >= 0 && heads[1] >= 0)
                jmap_treeify(m, heads[half]);
        }
    }
    PyMem_RawFree(old);
    return 0;
}

/* Inserts node x (its hash set) the way put (append) or computeIfAbsent (prepend) does. */
static int
jmap_insert(jmap_t *m, int32_t x, int append)
{
    int64_t index = (uint32_t)m->hash[x] & (uint64_t)(m->capacity - 1);
    int32_t first = m->tab[index];
    m->prev[x] = m->parent[x] = m->left[x] = m->right[x] = -1;
    m->red[x] = m->tree[x] = 0;
    if (first < 0) {
        m->next[x] = -1;
        m->tab[index] = x;
        return 0;
    }
    if (m->tree[first]) {
        jmap_put_tree_val(m, first, x);
        return 0;
    }
    int length = 1;
    if (append) {
        int32_t last = first;
        while (m->next[last] >= 0) {
            last = m->next[last];
            length++;
        }
        m->next[last] = x;
        m->next[x] = -1;
        length++;
        if (length <= JMAP_TREEIFY)
            return 0;
    }
    else {
        for (int32_t e = m->next[first]; e >= 0; e = m->next[e])
            length++;
        m->next[x] = first;
        m->tab[index] = x;
        length++;
        if (length < JMAP_TREEIFY)
            return 0;
    }
    if (m->capacity < JMAP_MIN_TREEIFY)     /* treeifyBin on a small table resizes */
        return jmap_resize(m);
    int32_t head = m->tab[index], prev = -1;
    for (int32_t e = head; e >= 0; e = m->next[e]) {
        m->tree[e] = 1;
        m->prev[e] = prev;
        prev = e;
    }
    jmap_treeify(m, head);
    return 0;
}

PyDoc_STRVAR(java_map_replay_doc,
"java_map_replay(spreads: buffer of int32, ranks: buffer of int64, capacities: buffer of\n"
"                int64, final: int, append: bool) -> bytearray\n\n"
"Keys 0..n-1 inserted in turn into a java.util.HashMap, by put (`append`) or computeIfAbsent,\n"
"key i once the table has grown to `capacities[i]` buckets (`spreads`: their spread hashes;\n"
"`ranks`: their `compareTo` order), the table then grown to `final`: the keys in Java's\n"
"iteration order (int64), as `javaorder.JavaHashMap` gives them.");

static PyObject *
java_map_replay(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer spreads, ranks, capacities;
    Py_ssize_t final;
    int append;
    if (!PyArg_ParseTuple(args, "y*y*y*np:java_map_replay", &spreads, &ranks, &capacities, &final, &append))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = spreads.len / 4;
    jmap_t m = {0};
    int failed = 0;
    const int64_t *caps = capacities.buf;
    if (spreads.len % 4 != 0 || ranks.len != n * 8 || capacities.len != n * 8 || n > INT32_MAX
            || final < 0 || final > ((Py_ssize_t)1 << 31) || (final & (final - 1)) != 0) {
        PyErr_SetString(PyExc_ValueError, "java_map_replay: one spread, rank and capacity per key, "
                        "capacities powers of two");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (caps[i] < 0 || caps[i] > final || (caps[i] & (caps[i] - 1)) != 0) {
            PyErr_SetString(PyExc_ValueError, "java_map_replay: capacities are powers of two up to final");
            goto done;
        }
    }
    size_t each = (size_t)(n ? n : 1);
    m.next = PyMem_RawMalloc(each * 5 * sizeof(int32_t));
    m.red = PyMem_RawMalloc(each * 2);
    result = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (m.next == NULL || m.red == NULL || result == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        Py_CLEAR(result);
        goto done;
    }
    m.prev = m.next + each;
    m.parent = m.prev + each;
    m.left = m.parent + each;
    m.right = m.left + each;
    m.tree = m.red + each;
    m.hash = spreads.buf;
    m.rank = ranks.buf;
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(result);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        while (m.capacity < caps[i] && !failed)
            failed = jmap_resize(&m) < 0;
        if (!failed && m.capacity == 0)
            failed = jmap_resize(&m) < 0;
        if (!failed)
            failed = jmap_insert(&m, (int32_t)i, append) < 0;
    }
    while (!failed && m.capacity < final)
        failed = jmap_resize(&m) < 0;
    Py_ssize_t k = 0;
    for (int64_t j = 0; !failed && j < m.capacity; j++)
        for (int32_t e = m.tab[j]; e >= 0; e = m.next[e])
            out[k++] = e;
    Py_END_ALLOW_THREADS
    if (failed) {
        Py_CLEAR(result);
        PyErr_NoMemory();
    }
done:
    PyMem_RawFree(m.next);
    PyMem_RawFree(m.red);
    PyMem_RawFree(m.tab);
    PyBuffer_Release(&spreads);
    PyBuffer_Release(&ranks);
    PyBuffer_Release(&capacities);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* string_records: a bitmap index's string entries as bytes (`writer._records`): each key's
 * length (big-endian int32), its bytes, then one big-endian int32 per column. numpy's form
 * (a join of the keys, a scatter of every byte through an index array) walked a million keys
 * three times, in Java's hash order: all over the heap. */

static inline void
put_be32(unsigned char *out, uint32_t value)
{
    out[0] = (unsigned char)(value >> 24);
    out[1] = (unsigned char)(value >> 16);
    out[2] = (unsigned char)(value >> 8);
    out[3] = (unsigned char)value;
}

PyDoc_STRVAR(string_records_doc,
"string_records(keys: list[bytes], columns: tuple[buffer of int64, ...]) -> tuple[bytearray, bytearray]\n\n"
"The records `length, key, column0, column1, ...` (big-endian int32 but the key's bytes) of\n"
"each key in turn, and each key's length (int64); ValueError for an item that is not exactly\n"
"bytes or a column of another length.");

static PyObject *
string_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *keys, *columns, *records = NULL, *lengths = NULL, *result = NULL;
    Py_buffer views[4];
    Py_ssize_t ncolumns = 0, opened = 0;
    if (!PyArg_ParseTuple(args, "O!O!:string_records", &PyList_Type, &keys, &PyTuple_Type, &columns))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(keys), total = 0;
    ncolumns = PyTuple_GET_SIZE(columns);
    if (ncolumns > 4) {
        PyErr_SetString(PyExc_ValueError, "string_records: at most 4 columns");
        return NULL;
    }
    for (; opened < ncolumns; opened++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(columns, opened), &views[opened], PyBUF_SIMPLE) < 0)
            goto done;
        if (views[opened].len != count * 8) {
            opened++;
            PyErr_SetString(PyExc_ValueError, "string_records: one int64 per key in each column");
            goto done;
        }
    }
    lengths = PyByteArray_FromStringAndSize(NULL, count * 8);
    if (lengths == NULL)
        goto done;
    int64_t *length_data = (int64_t *)PyByteArray_AS_STRING(lengths);
    PyObject **items = ((PyListObject *)keys)->ob_item;
    for (Py_ssize_t i = 0; i < count; i++) {
        PREFETCH(items, i, count);
        PyObject *key = items[i];
        if (!PyBytes_CheckExact(key)) {
            PyErr_Format(PyExc_ValueError, "string_records: key %zd is not bytes", i);
            goto done;
        }
        length_data[i] = PyBytes_GET_SIZE(key);
        total += 4 + PyBytes_GET_SIZE(key) + 4 * ncolumns;
    }
    records = PyByteArray_FromStringAndSize(NULL, total);
    if (records == NULL)
        goto done;
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(records);
    for (Py_ssize_t i = 0; i < count; i++) {
        PREFETCH(items, i, count);
        Py_ssize_t size = length_data[i];
        put_be32(out, (uint32_t)size);
        memcpy(out + 4, PyBytes_AS_STRING(items[i]), (size_t)size);
        out += 4 + size;
        for (Py_ssize_t c = 0; c < ncolumns; c++, out += 4)
            put_be32(out, (uint32_t)((const int64_t *)views[c].buf)[i]);
    }
    result = Py_BuildValue("(OO)", records, lengths);
done:
    for (Py_ssize_t c = 0; c < opened; c++)
        PyBuffer_Release(&views[c]);
    Py_XDECREF(records);
    Py_XDECREF(lengths);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* v2_blocks: bitmap V2's string keys. `v2_sort` orders distinct keys as Java compares them
 * (unsigned bytes, a prefix first; ties by index: stable), `v2_block_starts` packs the sorted
 * entries greedily into index blocks (`BitmapIndexBlock.tryAdd`), `v2_blocks` writes the
 * blocks (count, then `key, offset, length` records) and the index of their first keys. In
 * Python each was a call or a numpy gather per key, 1.3x V1's whole build at 100k keys.
 * The keys stay borrowed from the caller's list with the GIL held; every index is checked.
 *
 * The sort is a radix sort 8 key bytes at a time: the keys by their first 8 bytes (a stable
 * MSD pass per byte that varies, then by how many of the 8 a key has: a shorter key first),
 * then each run of keys that tie on 8 whole bytes by their next 8, and so on; bytes every key
 * of a run shares are skipped in one pass. The passes run over a compact array of (8 bytes,
 * key); a key's bytes are read once per level, asked for ahead. A comparison sort (`qsort`
 * comparing the keys' bytes) read two keys lying anywhere in memory per comparison: 1M keys
 * sharing their first 8 bytes by ten thousands took 0.3-0.4 s, now 0.1. Chains of keys that
 * begin one another still go to `qsort` after a few levels. `sorted_keys` gives the sorted
 * keys themselves as well (a range-bitmap's dictionary), gathered with the same look-ahead. */

#if defined(__GNUC__) || defined(__clang__)
#define KEY_PREFETCH(p) __builtin_prefetch(p)
#else
#define KEY_PREFETCH(p) ((void)0)
#endif
#define KEYS_AHEAD 16
#define KEYS_SMALL 32               /* runs this short: an insertion sort */
#define KEYS_DEPTH 64               /* runs tied this many levels deep: compared whole (`qsort`) */

typedef struct {
    uint64_t window;                /* 8 key bytes from the run's offset, big-endian, NUL-padded */
    PyObject *key;                  /* bytes, borrowed */
    Py_ssize_t size;
    Py_ssize_t index;
} key_entry_t;

static int
key_compare(const void *a, const void *b)
{
    const key_entry_t *x = a, *y = b;
    Py_ssize_t common = x->size < y->size ? x->size : y->size;
    int c = common ? memcmp(PyBytes_AS_STRING(x->key), PyBytes_AS_STRING(y->key), (size_t)common) : 0;
    if (c)
        return c;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* How many of the 8 bytes from `offset` the key has (0 .. 8): of two keys whose windows tie,
 * the one with fewer is a prefix of the other (its padding NULs the other's bytes). */
static inline unsigned
key_have(const key_entry_t *e, Py_ssize_t offset)
{
    Py_ssize_t left = e->size - offset;
    return left < 8 ? (unsigned)left : 8;
}

static inline uint64_t
key_window(const key_entry_t *e, Py_ssize_t offset)
{
    const unsigned char *at = (const unsigned char *)PyBytes_AS_STRING(e->key) + offset;
    unsigned have = key_have(e, offset);
    uint64_t window = 0;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (have == 8) {
        memcpy(&window, at, 8);
        return __builtin_bswap64(window);
    }
#endif
    for (unsigned j = 0; j < 8; j++)
        window = window << 8 | (j < have ? at[j] : 0);
    return window;
}

static void key_sort(key_entry_t *e, key_entry_t *scratch, Py_ssize_t n, Py_ssize_t offset, int depth);

/* The run `e[0 .. n - 1]` by the window's byte at `shift`, stable, through `scratch`: 0 where
 * they all have the same (nothing moved). */
static int
key_distribute(key_entry_t *e, key_entry_t *scratch, Py_ssize_t n, int shift)
{
    size_t count[256] = {0};
    for (Py_ssize_t i = 0; i < n; i++)
        count[(e[i].window >> shift) & 0xFF]++;
    if (count[(e[0].window >> shift) & 0xFF] == (size_t)n)
        return 0;
    size_t total = 0;
    for (int v = 0; v < 256; v++) {
        size_t c = count[v];
        count[v] = total;
        total += c;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        scratch[count[(e[i].window >> shift) & 0xFF]++] = e[i];
    memcpy(e, scratch, (size_t)n * sizeof(key_entry_t));
    return 1;
}

/* A run sorted by (window, bytes had): each run in it of keys with 8 equal bytes, sorted by
 * their next bytes. A run of nearly all the keys (a few ended in these 8 bytes: keys that
 * begin one another) counts as 8 levels deep: such chains reach the comparison sort soon. */
static void
key_ties(key_entry_t *e, key_entry_t *scratch, Py_ssize_t n, Py_ssize_t offset, int depth)
{
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && e[j].window == e[i].window && key_have(&e[j], offset) == key_have(&e[i], offset))
            j++;
        if (j - i > 1 && key_have(&e[i], offset) == 8)
            key_sort(e + i, scratch + i, j - i, offset + 8, depth + (j - i > n - n / 16 ? 8 : 1));
        i = j;
    }
}

/* The run `e[0 .. n - 1]` of equal window bytes above `shift` by (window, bytes had), stable,
 * and on (`key_ties`): a most-significant-digit radix sort of the bytes `varying` marks, a
 * short run by insertion. */
static void
key_msd(key_entry_t *e, key_entry_t *scratch, Py_ssize_t n, Py_ssize_t offset, int shift, uint64_t varying,
        int depth)
{
    for (;;) {
        while (shift >= 0 && !((varying >> shift) & 0xFF))
            shift -= 8;
        if (n <= KEYS_SMALL) {
            for (Py_ssize_t i = 1; i < n; i++) {
                key_entry_t x = e[i];
                unsigned have = key_have(&x, offset);
                Py_ssize_t j = i;
                for (; j > 0 && (e[j - 1].window > x.window
                                 || (e[j - 1].window == x.window && key_have(&e[j - 1], offset) > have)); j--)
                    e[j] = e[j - 1];
                e[j] = x;
            }
            break;
        }
        if (shift < 0) {                            /* equal windows: by the bytes had */
            size_t count[9] = {0}, total = 0;
            for (Py_ssize_t i = 0; i < n; i++)
                count[key_have(&e[i], offset)]++;
            if (count[key_have(&e[0], offset)] == (size_t)n)
                break;
            for (int v = 0; v < 9; v++) {
                size_t c = count[v];
                count[v] = total;
                total += c;
            }
            for (Py_ssize_t i = 0; i < n; i++)
                scratch[count[key_have(&e[i], offset)]++] = e[i];
            memcpy(e, scratch, (size_t)n * sizeof(key_entry_t));
            break;
        }
        if (key_distribute(e, scratch, n, shift)) {
            for (Py_ssize_t i = 0; i < n;) {        /* each byte's bucket on */
                uint64_t byte = (e[i].window >> shift) & 0xFF;
                Py_ssize_t j = i + 1;
                while (j < n && ((e[j].window >> shift) & 0xFF) == byte)
                    j++;
                if (j - i > 1)
                    key_msd(e + i, scratch + i, j - i, offset, shift - 8, varying, depth);
                i = j;
            }
            return;
        }
        shift -= 8;
    }
    key_ties(e, scratch, n, offset, depth);
}

/* How many bytes from `offset` on all keys of the run share (every key has `offset` bytes). */
static Py_ssize_t
key_shared(const key_entry_t *e, Py_ssize_t n, Py_ssize_t offset)
{
    const unsigned char *first = (const unsigned char *)PyBytes_AS_STRING(e[0].key) + offset;
    Py_ssize_t shared = e[0].size - offset;
    for (Py_ssize_t i = 1; i < n && shared > 0; i++) {
        const unsigned char *at = (const unsigned char *)PyBytes_AS_STRING(e[i].key) + offset;
        Py_ssize_t limit = e[i].size - offset < shared ? e[i].size - offset : shared, k = 0;
        uint64_t a, b;
        for (; k + 8 <= limit; k += 8) {
            memcpy(&a, first + k, 8);
            memcpy(&b, at + k, 8);
            if (a != b)
                break;
        }
        while (k < limit && first[k] == at[k])
            k++;
        shared = k;
    }
    return shared;
}

/* The run `e[0 .. n - 1]` of keys whose first `offset` bytes are equal, sorted (ties by index,
 * which they are in); `depth`: the runs it is inside. Where all keys share 8 bytes and more,
 * it goes on past all they share (long common prefixes cost one pass, not one per 8 bytes). */
static void
key_sort(key_entry_t *e, key_entry_t *scratch, Py_ssize_t n, Py_ssize_t offset, int depth)
{
    if (depth >= KEYS_DEPTH) {
        qsort(e, (size_t)n, sizeof(key_entry_t), key_compare);
        return;
    }
    uint64_t all = UINT64_MAX, any = 0;        /* the windows ANDed, ORed */
    unsigned least = 8;                         /* the fewest bytes had */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + KEYS_AHEAD < n)
            KEY_PREFETCH(PyBytes_AS_STRING(e[i + KEYS_AHEAD].key) + offset);
        uint64_t w = key_window(&e[i], offset);
        unsigned have = key_have(&e[i], offset);
        e[i].window = w;
        all &= w;
        any |= w;
        least = have < least ? have : least;
    }
    if (n > 1 && all == any && least == 8) {
        key_sort(e, scratch, n, offset + 8 + key_shared(e, n, offset + 8), depth + 1);
        return;
    }
    key_msd(e, scratch, n, offset, 56, all ^ any, depth);
}

/* The keys of the list `keys` (bytes) sorted into a new array of `*n` entries: NULL with an
 * exception set (`name`'s). */
static key_entry_t *
sorted_entries(PyObject *keys, Py_ssize_t *n, const char *name)
{
    *n = PyList_GET_SIZE(keys);
    size_t slots = (size_t)(*n ? *n : 1);
    key_entry_t *e = PyMem_Malloc(slots * sizeof(key_entry_t)), *scratch = PyMem_Malloc(slots * sizeof(key_entry_t));
    if (!e || !scratch) {
        PyMem_Free(e);
        PyMem_Free(scratch);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *item = PyList_GET_ITEM(keys, i);
        if (!PyBytes_Check(item)) {
            PyMem_Free(e);
            PyMem_Free(scratch);
            PyErr_Format(PyExc_TypeError, "%s: keys must be bytes", name);
            return NULL;
        }
        e[i].key = item;
        e[i].size = PyBytes_GET_SIZE(item);
        e[i].index = i;
    }
    key_sort(e, scratch, *n, 0, 0);
    PyMem_Free(scratch);
    return e;
}

/* `v2_sort` (`listed` 0) or `sorted_keys` (1) of `args`, parsed by `format`. */
static PyObject *
sorted_order(PyObject *args, const char *format, const char *name, int listed)
{
    PyObject *keys;
    if (!PyArg_ParseTuple(args, format, &PyList_Type, &keys))
        return NULL;
    Py_ssize_t n;
    key_entry_t *e = sorted_entries(keys, &n, name);
    if (e == NULL)
        return NULL;
    PyObject *order = PyByteArray_FromStringAndSize(NULL, n * 8), *sorted = listed ? PyList_New(n) : NULL;
    PyObject *out = NULL;
    if (order != NULL && (sorted != NULL || !listed)) {
        int64_t *indices = (int64_t *)PyByteArray_AS_STRING(order);
        for (Py_ssize_t i = 0; i < n; i++) {
            indices[i] = e[i].index;
            if (listed) {
                if (i + KEYS_AHEAD < n)
                    KEY_PREFETCH(e[i + KEYS_AHEAD].key);
                Py_INCREF(e[i].key);
                PyList_SET_ITEM(sorted, i, e[i].key);
            }
        }
        out = listed ? PyTuple_Pack(2, order, sorted) : Py_NewRef(order);
    }
    Py_XDECREF(order);
    Py_XDECREF(sorted);
    PyMem_Free(e);
    return out;
}

PyDoc_STRVAR(v2_sort_doc,
"v2_sort(keys) -> bytearray\n\n"
"Indices (int64) of the bytes in the list `keys` in ascending unsigned byte order (a key\n"
"before the longer keys it starts), stable: a radix sort 8 bytes at a time.");

static PyObject *
v2_sort(PyObject *Py_UNUSED(module), PyObject *args)
{
    return sorted_order(args, "O!:v2_sort", "v2_sort", 0);
}

PyDoc_STRVAR(sorted_keys_doc,
"sorted_keys(keys) -> tuple[bytearray, list[bytes]]\n\n"
"`v2_sort(keys)` and the keys in that order: `[keys[i] for i in order]`.");

static PyObject *
sorted_keys(PyObject *Py_UNUSED(module), PyObject *args)
{
    return sorted_order(args, "O!:sorted_keys", "sorted_keys", 1);
}

/* The bytes of item `i` of the list `keys`: 0, or -1 with TypeError/IndexError set. */
static int
v2_key(PyObject *keys, int64_t i, const char **data, Py_ssize_t *size)
{
    if (i < 0 || i >= PyList_GET_SIZE(keys)) {
        PyErr_SetString(PyExc_IndexError, "v2_blocks: entry index out of range");
        return -1;
    }
    PyObject *item = PyList_GET_ITEM(keys, (Py_ssize_t)i);
    if (!PyBytes_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "v2_blocks: keys must be bytes");
        return -1;
    }
    *data = PyBytes_AS_STRING(item);
    *size = PyBytes_GET_SIZE(item);
    return 0;
}

/* A buffer of int64 as a count of items: -1 with ValueError unless whole. */
static Py_ssize_t
v2_count(Py_buffer *buffer, const char *name)
{
    if (buffer->len % 8) {
        PyErr_Format(PyExc_ValueError, "v2_blocks: %s is not int64", name);
        return -1;
    }
    return buffer->len / 8;
}

static void
v2_put(unsigned char *at, int64_t value)
{
    uint32_t v = (uint32_t)value;       /* as numpy's astype(">i4"): the low 32 bits */
    at[0] = (unsigned char)(v >> 24);
    at[1] = (unsigned char)(v >> 16);
    at[2] = (unsigned char)(v >> 8);
    at[3] = (unsigned char)v;
}

PyDoc_STRVAR(v2_block_starts_doc,
"v2_block_starts(keys, order, limit) -> bytearray | None\n\n"
"Where each index block starts (int64) in `order` (int64 indices into the list of bytes\n"
"`keys`), an entry taking 12 + its key's size and a block 4 more and at most `limit`; None\n"
"where an entry fits no block.");

static PyObject *
v2_block_starts(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *keys;
    Py_buffer order;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!y*n:v2_block_starts", &PyList_Type, &keys, &order, &limit))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = v2_count(&order, "order");
    if (n < 0)
        goto done;
    const int64_t *entries = order.buf;
    out = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!out)
        goto done;
    int64_t *starts = (int64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t blocks = 0, used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *data;
        Py_ssize_t size;
        if (v2_key(keys, entries[i], &data, &size) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        if (size > limit - 16) {        /* 4 (block count) + 12 + size > limit */
            Py_CLEAR(out);
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        Py_ssize_t need = 12 + size;
        if (!blocks || used + need > limit - 4) {
            starts[blocks++] = i;
            used = 0;
        }
        used += need;
    }
    if (PyByteArray_Resize(out, blocks * 8) < 0)
        Py_CLEAR(out);
done:
    PyBuffer_Release(&order);
    return out;
}

PyDoc_STRVAR(v2_blocks_doc,
"v2_blocks(keys, order, starts, offsets, lengths) -> (bytearray, bytearray)\n\n"
"Bitmap V2's index blocks of the entries `order` (int64 indices into `keys`, a list of\n"
"bytes, and into the int64 `offsets` and `lengths`) split where `starts` say (int64,\n"
"ascending from 0): each block its entry count, then records `key, offset, length`; and the\n"
"records `first key, block offset` of the blocks.");

static PyObject *
v2_blocks(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *keys, *out = NULL, *blocks = NULL, *index = NULL;
    Py_buffer order, starts = {0}, offsets = {0}, lengths = {0};
    if (!PyArg_ParseTuple(args, "O!y*y*y*y*:v2_blocks", &PyList_Type, &keys, &order, &starts, &offsets,
                          &lengths))
        return NULL;
    Py_ssize_t n = v2_count(&order, "order"), m = v2_count(&starts, "starts");
    Py_ssize_t entries = v2_count(&offsets, "offsets");
    if (n < 0 || m < 0 || entries < 0)
        goto done;
    if (v2_count(&lengths, "lengths") != entries) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "v2_blocks: offsets and lengths differ in count");
        goto done;
    }
    const int64_t *sorted = order.buf, *start = starts.buf, *offset = offsets.buf, *length = lengths.buf;
    /* Sizes first, checking every index and boundary, then one exact allocation each. */
    Py_ssize_t block_bytes = 0, index_bytes = 0;
    for (Py_ssize_t b = 0; b < m; b++) {
        int64_t from = start[b], to = b + 1 < m ? start[b + 1] : n;
        if ((b == 0 && from != 0) || from >= to || to > n) {
            PyErr_SetString(PyExc_ValueError, "v2_blocks: block starts out of order");
            goto done;
        }
    }
    if (n && !m) {
        PyErr_SetString(PyExc_ValueError, "v2_blocks: entries without blocks");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *data;
        Py_ssize_t size;
        if (v2_key(keys, sorted[i], &data, &size) < 0)
            goto done;
        if (sorted[i] >= entries) {
            PyErr_SetString(PyExc_IndexError, "v2_blocks: entry index out of range");
            goto done;
        }
        if (size > INT32_MAX || block_bytes > PY_SSIZE_T_MAX / 2) {
            PyErr_SetString(PyExc_OverflowError, "v2_blocks: keys too large");
            goto done;
        }
        block_bytes += 12 + size;
    }
    for (Py_ssize_t b = 0; b < m; b++) {
        const char *data;
        Py_ssize_t size;
        if (v2_key(keys, sorted[start[b]], &data, &size) < 0)
            goto done;
        index_bytes += 8 + size;
    }
    block_bytes += 4 * m;
    blocks = PyByteArray_FromStringAndSize(NULL, block_bytes);
    index = PyByteArray_FromStringAndSize(NULL, index_bytes);
    if (!blocks || !index)
        goto done;
    unsigned char *at = (unsigned char *)PyByteArray_AS_STRING(blocks);
    unsigned char *head = (unsigned char *)PyByteArray_AS_STRING(index);
    unsigned char *base = at;
    for (Py_ssize_t b = 0; b < m; b++) {
        int64_t from = start[b], to = b + 1 < m ? start[b + 1] : n;
        const char *data;
        Py_ssize_t size;
        if (v2_key(keys, sorted[from], &data, &size) < 0)     /* checked above */
            goto done;
        v2_put(head, size);
        memcpy(head + 4, data, (size_t)size);
        v2_put(head + 4 + size, at - base);
        head += 8 + size;
        v2_put(at, to - from);
        at += 4;
        for (int64_t i = from; i < to; i++) {
            if (v2_key(keys, sorted[i], &data, &size) < 0)
                goto done;
            v2_put(at, size);
            memcpy(at + 4, data, (size_t)size);
            v2_put(at + 4 + size, offset[sorted[i]]);
            v2_put(at + 8 + size, length[sorted[i]]);
            at += 12 + size;
        }
    }
    out = PyTuple_Pack(2, blocks, index);
done:
    Py_XDECREF(blocks);
    Py_XDECREF(index);
    PyBuffer_Release(&order);
    if (starts.obj)
        PyBuffer_Release(&starts);
    if (offsets.obj)
        PyBuffer_Release(&offsets);
    if (lengths.obj)
        PyBuffer_Release(&lengths);
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* Planning's per-file loops after the live files are listed (`table/merge.py`): a filtered
 * 100k-file plan keeps ~17k candidates after the statistics and ~6k files, and each Python pass
 * over them (a dict keyed by each file's container, by each answer, by each partition, a path
 * split per file) cost 0.5-2 ms of a ~35 ms warm plan. */

PyDoc_STRVAR(value_codes_doc,
"value_codes(keys: list, positions: list[int] | None, identity: bool, /) -> tuple[bytes, list[int]]\n\n"
"Of the keys `keys[p]` for p in `positions` (or every key), each one's number among the distinct\n"
"keys in first-seen order, as native int32 bytes, and where each number first occurs (an index\n"
"into that sequence): keys told apart by equality (a dict's lookup), or with `identity` by the\n"
"object itself. A key that is the previous one takes its number without a lookup (a plan's\n"
"files come in runs sharing a container or a partition).");

static PyObject *
value_codes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *keys, *positions;
    int identity;
    if (!PyArg_ParseTuple(args, "O!Op:value_codes", &PyList_Type, &keys, &positions, &identity))
        return NULL;
    if (positions != Py_None && !PyList_Check(positions)) {
        PyErr_SetString(PyExc_TypeError, "value_codes: positions must be a list or None");
        return NULL;
    }
    Py_ssize_t n = positions == Py_None ? PyList_GET_SIZE(keys) : PyList_GET_SIZE(positions);
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "value_codes: too many keys");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    PyObject *firsts = PyList_New(0);
    PyObject *index = PyDict_New();
    PyObject *result = NULL, *previous = NULL;
    int32_t previous_code = -1;
    if (!out || !firsts || !index)
        goto done;
    int32_t *codes = (int32_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t k = i;
        if (positions != Py_None) {
            if (i >= PyList_GET_SIZE(positions)) {
                PyErr_SetString(PyExc_RuntimeError, "value_codes: positions changed size");
                goto done;
            }
            k = PyNumber_AsSsize_t(PyList_GET_ITEM(positions, i), PyExc_IndexError);
            if (k == -1 && PyErr_Occurred())
                goto done;
        }
        Py_ssize_t size = PyList_GET_SIZE(keys);
        if (k < 0)
            k += size;
        if (k < 0 || k >= size) {
            PyErr_SetString(PyExc_IndexError, "list index out of range");
            goto done;
        }
        PyObject *key = PyList_GET_ITEM(keys, k);
        if (key == previous) {
            codes[i] = previous_code;
            continue;
        }
        Py_INCREF(key);
        Py_XSETREF(previous, key);      /* (a key's __eq__ may change the list) */
        PyObject *lookup = identity ? PyLong_FromVoidPtr(key) : (Py_INCREF(key), key);
        if (!lookup)
            goto done;
        PyObject *found = PyDict_GetItemWithError(index, lookup);
        int32_t code;
        if (found) {
            code = (int32_t)PyLong_AsLong(found);
        } else if (PyErr_Occurred()) {
            Py_DECREF(lookup);
            goto done;
        } else {
            code = (int32_t)PyList_GET_SIZE(firsts);
            PyObject *number = PyLong_FromLong(code);
            PyObject *first = PyLong_FromSsize_t(i);
            int failed = !number || !first || PyDict_SetItem(index, lookup, number) < 0
                         || PyList_Append(firsts, first) < 0;
            Py_XDECREF(number);
            Py_XDECREF(first);
            if (failed) {
                Py_DECREF(lookup);
                goto done;
            }
        }
        Py_DECREF(lookup);
        previous_code = code;
        codes[i] = code;
    }
    result = PyTuple_Pack(2, out, firsts);
done:
    Py_XDECREF(out);
    Py_XDECREF(firsts);
    Py_XDECREF(index);
    Py_XDECREF(previous);
    return result;
}

PyDoc_STRVAR(path_directories_doc,
"path_directories(paths: list[str], /) -> dict[str, int] | None\n\n"
"`dict(zip(directories, range(len(paths))))` where each directory is `path.rpartition('/')[0]`:\n"
"each directory (in first-seen order) with the index of its last path; None where a path holds\n"
"a `?` (a URI's query: such paths are resolved one by one). A path in the previous path's\n"
"directory is compared in place, no string made (a plan's files come by directory).");

static PyObject *
path_directories(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *paths;
    if (!PyArg_ParseTuple(args, "O!:path_directories", &PyList_Type, &paths))
        return NULL;
    PyObject *out = PyDict_New();
    if (!out)
        return NULL;
    PyObject *current = NULL;           /* the run's directory and the path it came from */
    PyObject *current_path = NULL;
    Py_ssize_t current_length = -1, last = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(paths); i++) {
        PyObject *path = PyList_GET_ITEM(paths, i);
        if (!PyUnicode_Check(path)) {
            PyErr_Format(PyExc_TypeError, "path_directories: a path must be str, not %.100s",
                         Py_TYPE(path)->tp_name);
            goto fail;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(path);
        Py_ssize_t slash = PyUnicode_FindChar(path, '/', 0, length, -1);
        Py_ssize_t query = slash == -2 ? -2 : PyUnicode_FindChar(path, '?', 0, length, 1);
        if (query == -2)
            goto fail;
        if (query >= 0) {
            Py_XDECREF(current);
            Py_XDECREF(current_path);
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        Py_ssize_t cut = slash < 0 ? 0 : slash;
        if (current && cut == current_length
                && PyUnicode_KIND(path) == PyUnicode_KIND(current_path)
                && memcmp(PyUnicode_DATA(path), PyUnicode_DATA(current_path),
                          (size_t)cut * PyUnicode_KIND(path)) == 0) {
            last = i;
            continue;
        }
        if (current) {
            PyObject *number = PyLong_FromSsize_t(last);
            int failed = !number || PyDict_SetItem(out, current, number) < 0;
            Py_XDECREF(number);
            Py_CLEAR(current);
            Py_CLEAR(current_path);
            if (failed)
                goto fail;
        }
        current = PyUnicode_Substring(path, 0, cut);
        if (!current)
            goto fail;
        Py_INCREF(path);
        current_path = path;
        current_length = cut;
        last = i;
    }
    if (current) {
        PyObject *number = PyLong_FromSsize_t(last);
        int failed = !number || PyDict_SetItem(out, current, number) < 0;
        Py_XDECREF(number);
        Py_CLEAR(current);
        Py_CLEAR(current_path);
        if (failed)
            goto fail;
    }
    return out;
fail:
    Py_XDECREF(current);
    Py_XDECREF(current_path);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bloom_add", bloom_add, METH_VARARGS, bloom_add_doc},
    {"bloom_add_items", bloom_add_items, METH_VARARGS, bloom_add_items_doc},
    {"xxh64_offsets", xxh64_offsets, METH_VARARGS, xxh64_offsets_doc},
    {"xxh64_each", xxh64_each, METH_VARARGS, xxh64_each_doc},
    {"compress", compress, METH_VARARGS, compress_doc},
    {"split_rows", split_rows, METH_VARARGS, split_rows_doc},
    {"group_rows", group_rows, METH_VARARGS, group_rows_doc},
    {"number_rows", number_rows, METH_VARARGS, number_rows_doc},
    {"pack_rows", pack_rows, METH_VARARGS, pack_rows_doc},
    {"split_packed", split_packed, METH_VARARGS, split_packed_doc},
    {"serialize_groups", serialize_groups, METH_VARARGS, serialize_groups_doc},
    {"mask_bitmap", mask_bitmap, METH_VARARGS, mask_bitmap_doc},
    {"serialize_slices", serialize_slices, METH_VARARGS, serialize_slices_doc},
    {"column_slices", column_slices, METH_VARARGS, column_slices_doc},
    {"value_presence", value_presence, METH_VARARGS, value_presence_doc},
    {"block_search", block_search, METH_VARARGS, block_search_doc},
    {"row_ids", row_ids, METH_VARARGS, row_ids_doc},
    {"find_row_ids", find_row_ids, METH_VARARGS, find_row_ids_doc},
    {"find_handle", find_handle, METH_VARARGS, find_handle_doc},
    {"lookup_block", lookup_block, METH_VARARGS, lookup_block_doc},
    {"btree_tail", btree_tail, METH_VARARGS, btree_tail_doc},
    {"btree_lookup", btree_lookup, METH_VARARGS, btree_lookup_doc},
    {"java_map_replay", java_map_replay, METH_VARARGS, java_map_replay_doc},
    {"string_records", string_records, METH_VARARGS, string_records_doc},
    {"stats_bounds", stats_bounds, METH_VARARGS, stats_bounds_doc},
    {"partition_judge", partition_judge, METH_VARARGS, partition_judge_doc},
    {"stats_nulls", stats_nulls, METH_VARARGS, stats_nulls_doc},
    {"read_pass", read_pass, METH_VARARGS, read_pass_doc},
    {"attributes", attributes, METH_VARARGS, attributes_doc},
    {"v2_sort", v2_sort, METH_VARARGS, v2_sort_doc},
    {"sorted_keys", sorted_keys, METH_VARARGS, sorted_keys_doc},
    {"v2_block_starts", v2_block_starts, METH_VARARGS, v2_block_starts_doc},
    {"v2_blocks", v2_blocks, METH_VARARGS, v2_blocks_doc},
    {"slot_offsets", slot_offsets, METH_VARARGS, slot_offsets_doc},
    {"new_slotted", new_slotted, METH_VARARGS, new_slotted_doc},
    {"untrack", untrack, METH_VARARGS, untrack_doc},
    {"fold_into", fold_into, METH_VARARGS, fold_into_doc},
    {"live_files", live_files, METH_VARARGS, live_files_doc},
    {"slotted_rows", slotted_rows, METH_VARARGS, slotted_rows_doc},
    {"read_sorted", read_sorted, METH_VARARGS, read_sorted_doc},
    {"read_positions", read_positions, METH_VARARGS, read_positions_doc},
    {"untrack_containers", untrack_containers, METH_VARARGS, untrack_containers_doc},
    {"value_codes", value_codes, METH_VARARGS, value_codes_doc},
    {"path_directories", path_directories, METH_VARARGS, path_directories_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "The index writers' bulk loops (see kernels.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    return PyModule_Create(&module);
}
