/*
 * Reference harness ("oracle") for paimon-schema's interop tests.
 *
 * Every byte this program emits or interprets goes through Apache Paimon's OWN writer and reader
 * classes from the jar on the classpath (paimon-bundle 1.0-SNAPSHOT from the PyPI wheel
 * paimon-python-ali==0.1.1). Nothing here re-implements a layout: the harness only converts JSON
 * requests into Paimon calls and Paimon results back into JSON.
 *
 * Protocol: stdin holds one JSON array of request objects (UTF-8); stdout receives one JSON array
 * with exactly one response object per request, in the same order. A request that throws gets
 * {"error": "<ExceptionClass>: <message>", "causes": [...]} and the batch carries on.
 * Bytes travel as base64 strings. The value encoding for index ops is documented in
 * paimon_schema/reference/__init__.py.
 */

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.deletionvectors.DeletionVectorsIndexFile;
import org.apache.paimon.fileindex.FileIndexFormat;
import org.apache.paimon.fileindex.FileIndexReader;
import org.apache.paimon.fileindex.FileIndexResult;
import org.apache.paimon.fileindex.FileIndexWriter;
import org.apache.paimon.fileindex.FileIndexer;
import org.apache.paimon.fileindex.bitmap.BitmapIndexResultLazy;
import org.apache.paimon.fs.ByteArraySeekableStream;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.index.HashIndexFile;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.options.MemorySize;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.FieldRef;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.source.DeletionFile;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypeRoot;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.IntIterator;
import org.apache.paimon.utils.Pair;
import org.apache.paimon.utils.PathFactory;
import org.apache.paimon.utils.RoaringBitmap32;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Stream;

public final class PaimonReference {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** LocalFileIO is what Paimon itself uses for local tables; the DV and hash APIs need one. */
    private final FileIO fileIO = LocalFileIO.create();

    /** One scratch directory per JVM run; every file-based op gets its own sub-directory. */
    private final java.nio.file.Path scratch;

    private int scratchCounter = 0;

    private PaimonReference(java.nio.file.Path scratch) {
        this.scratch = scratch;
    }

    public static void main(String[] args) throws Exception {
        // Paimon and its dependencies may log or print; keep stdout for our JSON only.
        PrintStream realOut = System.out;
        System.setOut(System.err);

        JsonNode requests = JSON.readTree(readAll(System.in));
        if (requests == null || !requests.isArray()) {
            throw new IllegalArgumentException("stdin must hold a JSON array of requests");
        }
        java.nio.file.Path scratch = Files.createTempDirectory("paimon-reference-");
        ArrayNode responses = NODES.arrayNode();
        try {
            PaimonReference ref = new PaimonReference(scratch);
            for (JsonNode request : requests) {
                responses.add(ref.handle(request));
            }
        } finally {
            deleteRecursively(scratch);
        }
        byte[] out = JSON.writeValueAsBytes(responses); // UTF-8
        realOut.write(out);
        realOut.flush();
    }

    // ------------------------------------------------------------------------------------------
    // Dispatch
    // ------------------------------------------------------------------------------------------

    private ObjectNode handle(JsonNode request) {
        try {
            String op = text(request, "op");
            switch (op) {
                case "info":
                    return info();
                case "write_container":
                    return writeContainer(request);
                case "read_container":
                    return readContainer(request);
                case "write_dv":
                    return writeDv(request);
                case "read_dv":
                    return readDv(request);
                case "write_hash":
                    return writeHash(request);
                case "read_hash":
                    return readHash(request);
                case "write_index":
                    return writeIndex(request);
                case "query_index":
                    return queryIndex(request);
                case "hashmap_order":
                    return hashMapOrder(request);
                case "int_open_hash_set_order":
                    return intOpenHashSetOrder(request);
                case "bench_index": // benchmark ops (issue 4), see the section at the end
                    return benchIndex(request);
                case "write_table": // table ops (issue 6), see the section at the end
                    return writeTable(request);
                case "delete_positions":
                    return deletePositions(request);
                case "read_table":
                    return readTable(request);
                case "scan_table":
                    return scanTable(request);
                case "create_tag":
                    return createTag(request);
                default:
                    throw new IllegalArgumentException("unknown op: " + op);
            }
        } catch (Throwable t) {
            ObjectNode error = NODES.objectNode();
            error.put("error", describe(t));
            ArrayNode causes = error.putArray("causes");
            for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                causes.add(describe(c));
            }
            return error;
        }
    }

    private static String describe(Throwable t) {
        return t.getClass().getName() + ": " + t.getMessage();
    }

    // ------------------------------------------------------------------------------------------
    // info: which Paimon this is (read from the jar's own Maven metadata)
    // ------------------------------------------------------------------------------------------

    private ObjectNode info() throws IOException {
        ObjectNode out = NODES.objectNode();
        out.put("paimon_version", mavenVersion("paimon-bundle"));
        out.put("paimon_core_version", mavenVersion("paimon-core"));
        out.put("java_version", System.getProperty("java.version"));
        // Capability probes: the classes newer Paimon releases added.
        ObjectNode has = out.putObject("has_class");
        for (String cls :
                new String[] {
                    "org.apache.paimon.deletionvectors.Bitmap64DeletionVector",
                    "org.apache.paimon.index.DeletionVectorMeta",
                    "org.apache.paimon.fileindex.bitmap.BitmapFileIndexMetaV2",
                    "org.apache.paimon.fileindex.bsi.BitSliceIndexBitmapFileIndex",
                    "org.apache.paimon.fileindex.rangebitmap.RangeBitmapFileIndex"
                }) {
            has.put(cls, classExists(cls));
        }
        return out;
    }

    private static String mavenVersion(String artifact) throws IOException {
        String resource = "META-INF/maven/org.apache.paimon/" + artifact + "/pom.properties";
        try (InputStream in = PaimonReference.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        }
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, PaimonReference.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------------------------------
    // File-index container: FileIndexFormat.Writer / FileIndexFormat.Reader
    // ------------------------------------------------------------------------------------------

    /**
     * "given": LinkedHashMaps in request order, so the caller controls column and entry order.
     * "java": HashMaps filled the way this jar's DataFileIndexWriter does it (maintainers in a
     * HashMap keyed by column name, then serializeMaintainers() copies them into a
     * HashMap<column, HashMap<type, bytes>> with computeIfAbsent), so Java's hashing decides.
     * Note: this jar's DataFileIndexWriter keeps ONE maintainer per column, so a real table
     * never gets two index types on one column; the emulation accepts several anyway.
     */
    private ObjectNode writeContainer(JsonNode request) throws IOException {
        String order = request.has("order") ? text(request, "order") : "given";
        Map<String, Map<String, byte[]>> indexes;
        if ("given".equals(order)) {
            indexes = new LinkedHashMap<>();
            for (JsonNode column : array(request, "columns")) {
                Map<String, byte[]> perType =
                        indexes.computeIfAbsent(text(column, "name"), k -> new LinkedHashMap<>());
                for (JsonNode index : array(column, "indexes")) {
                    perType.put(text(index, "type"), bytesOrNull(index.get("blob")));
                }
            }
        } else if ("java".equals(order)) {
            // DataFileIndexWriter's constructor: indexMaintainers.put(columnName, maintainer)
            Map<String, List<Pair<String, byte[]>>> maintainers = new HashMap<>();
            for (JsonNode column : array(request, "columns")) {
                List<Pair<String, byte[]>> entries = new ArrayList<>();
                for (JsonNode index : array(column, "indexes")) {
                    entries.add(Pair.of(text(index, "type"), bytesOrNull(index.get("blob"))));
                }
                maintainers.put(text(column, "name"), entries);
            }
            // DataFileIndexWriter.serializeMaintainers()
            indexes = new HashMap<>();
            for (Map.Entry<String, List<Pair<String, byte[]>>> m : maintainers.entrySet()) {
                for (Pair<String, byte[]> e : m.getValue()) {
                    indexes.computeIfAbsent(m.getKey(), k -> new HashMap<>())
                            .put(e.getLeft(), e.getRight());
                }
            }
        } else {
            throw new IllegalArgumentException("order must be 'given' or 'java', got " + order);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (FileIndexFormat.Writer writer = FileIndexFormat.createWriter(bytes)) {
            writer.writeColumnIndexes(indexes);
        }
        ObjectNode out = NODES.objectNode();
        out.put("data", b64(bytes.toByteArray()));
        return out;
    }

    /**
     * What FileIndexFormat.Reader sees. Reader.readAll() gives the bytes per (column, type); an
     * EMPTY_INDEX_FLAG entry is indistinguishable there (zero bytes), so the parsed header (the
     * reader's private "header" map of Pair(start, length)) is read too: start -1 becomes null.
     */
    @SuppressWarnings("unchecked")
    private ObjectNode readContainer(JsonNode request) throws Exception {
        byte[] data = bytes(request, "data");
        // The reader resolves column types only when an index reader is created; readAll does not.
        RowType rowType = RowType.of();
        ObjectNode out = NODES.objectNode();
        ObjectNode columns = out.putObject("columns");
        ObjectNode entries = out.putObject("entries");
        try (FileIndexFormat.Reader reader =
                FileIndexFormat.createReader(new ByteArraySeekableStream(data), rowType)) {
            Field headerField = FileIndexFormat.Reader.class.getDeclaredField("header");
            headerField.setAccessible(true);
            Map<String, Map<String, Pair<Integer, Integer>>> header =
                    (Map<String, Map<String, Pair<Integer, Integer>>>) headerField.get(reader);
            Map<String, Map<String, byte[]>> all = reader.readAll();
            for (Map.Entry<String, Map<String, Pair<Integer, Integer>>> column : header.entrySet()) {
                ObjectNode types = columns.putObject(column.getKey());
                ObjectNode rawTypes = entries.putObject(column.getKey());
                for (Map.Entry<String, Pair<Integer, Integer>> e : column.getValue().entrySet()) {
                    int start = e.getValue().getLeft();
                    int length = e.getValue().getRight();
                    if (start == -1) {
                        types.putNull(e.getKey());
                    } else {
                        types.put(e.getKey(), b64(all.get(column.getKey()).get(e.getKey())));
                    }
                    ArrayNode raw = rawTypes.putArray(e.getKey());
                    raw.add(start);
                    raw.add(length);
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------
    // Deletion vectors: DeletionVectorsIndexFile (+ DeletionVectorIndexFileWriter inside it)
    // ------------------------------------------------------------------------------------------

    private ObjectNode writeDv(JsonNode request) throws Exception {
        if (request.has("bitmap64") && request.get("bitmap64").asBoolean()) {
            // 64-bit bins (Bitmap64DeletionVector) arrived in Paimon 1.2.0.
            throw new UnsupportedOperationException(
                    "this Paimon jar ("
                            + mavenVersion("paimon-bundle")
                            + ") has no 64-bit deletion vectors (Bitmap64DeletionVector is absent)");
        }
        // Bins are written in map iteration order: a LinkedHashMap keeps the request's order.
        LinkedHashMap<String, DeletionVector> dvs = new LinkedHashMap<>();
        for (JsonNode file : array(request, "files")) {
            BitmapDeletionVector dv = new BitmapDeletionVector();
            for (JsonNode position : file.get(1)) {
                dv.delete(longValue(position));
            }
            dvs.put(file.get(0).textValue(), dv);
        }
        // Default: one file, whatever the size (Paimon's own default rolls at 2 MiB).
        long target = request.has("target_size") ? longValue(request.get("target_size")) : 1L << 40;
        java.nio.file.Path dir = newScratchDir();
        DeletionVectorsIndexFile indexFile =
                new DeletionVectorsIndexFile(fileIO, pathFactory(dir), MemorySize.ofBytes(target));
        List<IndexFileMeta> metas = indexFile.write(dvs);

        ArrayNode files = NODES.arrayNode();
        for (IndexFileMeta meta : metas) {
            ObjectNode f = NODES.objectNode();
            f.put("name", meta.fileName());
            f.put("index_type", meta.indexType());
            f.put("file_size", meta.fileSize());
            f.put("row_count", meta.rowCount());
            f.put("data", b64(Files.readAllBytes(dir.resolve(meta.fileName()))));
            f.set("ranges", dvRanges(meta));
            files.add(f);
        }
        ObjectNode out = NODES.objectNode();
        out.set("data", files.get(0).get("data"));
        out.set("ranges", files.get(0).get("ranges"));
        out.set("index_files", files);
        return out;
    }

    /** IndexFileMeta.deletionVectorsRanges() as [name, offset, length, cardinality]. */
    private static ArrayNode dvRanges(IndexFileMeta meta) {
        ArrayNode ranges = NODES.arrayNode();
        LinkedHashMap<String, Pair<Integer, Integer>> dvRanges = meta.deletionVectorsRanges();
        if (dvRanges == null) {
            return ranges;
        }
        for (Map.Entry<String, Pair<Integer, Integer>> e : dvRanges.entrySet()) {
            ArrayNode r = ranges.addArray();
            r.add(e.getKey());
            r.add(e.getValue().getLeft());
            r.add(e.getValue().getRight());
            // This jar's IndexFileMeta records no cardinality (_CARDINALITY arrived in 1.0.0
            // proper, as DeletionVectorMeta); report it as Java has it: absent.
            r.addNull();
        }
        return ranges;
    }

    /**
     * reader "index_file" (default): DeletionVectorsIndexFile.readDeletionVector(Map<name,
     * DeletionFile>) - checks the version byte, seeks to each offset, checks size == length and
     * verifies the CRC. reader "single": DeletionVector.read(FileIO, DeletionFile) per file - seeks,
     * checks size and magic, skips the CRC. reader "all": readAllDeletionVectors(IndexFileMeta)
     * - the bulk reader; it reads bins sequentially after the version byte using only the names
     * and lengths of the ranges (offsets are ignored by Java).
     */
    private ObjectNode readDv(JsonNode request) throws Exception {
        byte[] data = bytes(request, "data");
        if (!request.has("ranges") || request.get("ranges").isNull()) {
            throw new UnsupportedOperationException(
                    "this Paimon jar has no deletion-vector reader that works without ranges "
                            + "(readAllDeletionVectors needs IndexFileMeta.deletionVectorsRanges)");
        }
        String readerKind = request.has("reader") ? text(request, "reader") : "index_file";
        java.nio.file.Path dir = newScratchDir();
        String fileName = "index-" + UUID.randomUUID() + "-0";
        java.nio.file.Path file = dir.resolve(fileName);
        Files.write(file, data);
        String path = new Path(file.toUri()).toString();

        LinkedHashMap<String, DeletionFile> deletionFiles = new LinkedHashMap<>();
        LinkedHashMap<String, Pair<Integer, Integer>> ranges = new LinkedHashMap<>();
        for (JsonNode r : array(request, "ranges")) {
            String name = r.get(0).textValue();
            long offset = longValue(r.get(1));
            long length = longValue(r.get(2));
            deletionFiles.put(name, new DeletionFile(path, offset, length));
            ranges.put(name, Pair.of((int) offset, (int) length));
        }

        DeletionVectorsIndexFile indexFile =
                new DeletionVectorsIndexFile(fileIO, pathFactory(dir), MemorySize.ofMebiBytes(2));
        Map<String, DeletionVector> result = new LinkedHashMap<>();
        switch (readerKind) {
            case "index_file":
                result.putAll(indexFile.readDeletionVector(deletionFiles));
                break;
            case "single":
                for (Map.Entry<String, DeletionFile> e : deletionFiles.entrySet()) {
                    result.put(e.getKey(), DeletionVector.read(fileIO, e.getValue()));
                }
                break;
            case "all":
                IndexFileMeta meta =
                        new IndexFileMeta(
                                DeletionVectorsIndexFile.DELETION_VECTORS_INDEX,
                                fileName,
                                data.length,
                                ranges.size(),
                                ranges);
                result.putAll(indexFile.readAllDeletionVectors(meta));
                break;
            default:
                throw new IllegalArgumentException("unknown reader: " + readerKind);
        }

        ObjectNode out = NODES.objectNode();
        ObjectNode files = out.putObject("files");
        ObjectNode cardinalities = out.putObject("cardinalities");
        for (String name : ranges.keySet()) {
            DeletionVector dv = result.get(name);
            if (dv == null) {
                continue;
            }
            ArrayNode positions = files.putArray(name);
            for (Iterator<Integer> it = roaringOf(dv).iterator(); it.hasNext(); ) {
                positions.add(Integer.toUnsignedLong(it.next()));
            }
            cardinalities.put(name, dv.getCardinality());
        }
        return out;
    }

    /** The positions of a DV: BitmapDeletionVector keeps them in a private RoaringBitmap32. */
    private static RoaringBitmap32 roaringOf(DeletionVector dv) throws Exception {
        if (!(dv instanceof BitmapDeletionVector)) {
            throw new UnsupportedOperationException(
                    "unexpected deletion vector class " + dv.getClass().getName());
        }
        Field f = BitmapDeletionVector.class.getDeclaredField("roaringBitmap");
        f.setAccessible(true);
        return (RoaringBitmap32) f.get(dv);
    }

    // ------------------------------------------------------------------------------------------
    // Dynamic-bucket hash index: HashIndexFile (IntFileUtils underneath)
    // ------------------------------------------------------------------------------------------

    private ObjectNode writeHash(JsonNode request) throws Exception {
        JsonNode ints = array(request, "ints");
        int[] values = new int[ints.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = Math.toIntExact(longValue(ints.get(i)));
        }
        java.nio.file.Path dir = newScratchDir();
        HashIndexFile hashIndexFile = new HashIndexFile(fileIO, pathFactory(dir));
        String name = hashIndexFile.write(IntIterator.create(values));
        ObjectNode out = NODES.objectNode();
        out.put("name", name);
        out.put("data", b64(Files.readAllBytes(dir.resolve(name))));
        return out;
    }

    private ObjectNode readHash(JsonNode request) throws Exception {
        java.nio.file.Path dir = newScratchDir();
        String name = "index-" + UUID.randomUUID() + "-0";
        Files.write(dir.resolve(name), bytes(request, "data"));
        HashIndexFile hashIndexFile = new HashIndexFile(fileIO, pathFactory(dir));
        int[] values;
        try (IntIterator it = hashIndexFile.read(name)) {
            values = IntIterator.toInts(it);
        }
        ObjectNode out = NODES.objectNode();
        ArrayNode ints = out.putArray("ints");
        for (int v : values) {
            ints.add(v);
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------
    // Single file indexes: FileIndexer.create(type, dataType, options)
    // ------------------------------------------------------------------------------------------

    private ObjectNode writeIndex(JsonNode request) {
        String indexType = text(request, "index_type");
        DataType dataType = parseType(text(request, "data_type"));
        Options options = options(indexType, request.get("options"));
        FileIndexer indexer = FileIndexer.create(indexType, dataType, options);
        FileIndexWriter writer = indexer.createWriter();
        for (JsonNode value : array(request, "values")) {
            // writeRecord (marks the writer non-empty, then write) is what DataFileIndexWriter
            // calls for every row, nulls included; each index decides what a null means.
            writer.writeRecord(toInternal(value, dataType));
        }
        ObjectNode out = NODES.objectNode();
        out.put("blob", b64(writer.serializedBytes()));
        return out;
    }

    private ObjectNode queryIndex(JsonNode request) throws IOException {
        String indexType = text(request, "index_type");
        DataType dataType = parseType(text(request, "data_type"));
        byte[] blob = bytes(request, "blob");
        Options options = options(indexType, request.get("options"));
        FieldRef field = new FieldRef(0, "f0", dataType);

        ObjectNode out = NODES.objectNode();
        ArrayNode results = out.putArray("results");
        for (JsonNode predicate : array(request, "predicates")) {
            // A fresh reader per predicate, as FileIndexPredicate creates them per evaluation.
            FileIndexReader reader =
                    FileIndexer.create(indexType, dataType, options)
                            .createReader(new ByteArraySeekableStream(blob), 0, blob.length);
            results.add(describeResult(visit(reader, field, predicate, dataType)));
        }
        return out;
    }

    private static FileIndexResult visit(
            FileIndexReader reader, FieldRef field, JsonNode predicate, DataType dataType) {
        String kind = text(predicate, "kind");
        switch (kind) {
            case "equal":
                return reader.visitEqual(field, toInternal(predicate.get("literal"), dataType));
            case "not_equal":
                return reader.visitNotEqual(field, toInternal(predicate.get("literal"), dataType));
            case "less_than":
                return reader.visitLessThan(field, toInternal(predicate.get("literal"), dataType));
            case "less_or_equal":
                return reader.visitLessOrEqual(
                        field, toInternal(predicate.get("literal"), dataType));
            case "greater_than":
                return reader.visitGreaterThan(
                        field, toInternal(predicate.get("literal"), dataType));
            case "greater_or_equal":
                return reader.visitGreaterOrEqual(
                        field, toInternal(predicate.get("literal"), dataType));
            case "in":
                return reader.visitIn(field, literals(predicate, dataType));
            case "not_in":
                return reader.visitNotIn(field, literals(predicate, dataType));
            case "is_null":
                return reader.visitIsNull(field);
            case "is_not_null":
                return reader.visitIsNotNull(field);
            default:
                throw new IllegalArgumentException("unknown predicate kind: " + kind);
        }
    }

    private static List<Object> literals(JsonNode predicate, DataType dataType) {
        List<Object> values = new ArrayList<>();
        for (JsonNode v : array(predicate, "literals")) {
            values.add(toInternal(v, dataType));
        }
        return values;
    }

    private static ObjectNode describeResult(FileIndexResult result) {
        ObjectNode out = NODES.objectNode();
        if (result == FileIndexResult.REMAIN) {
            out.put("kind", "remain");
            out.putNull("rows");
        } else if (result == FileIndexResult.SKIP) {
            out.put("kind", "skip");
            out.putNull("rows");
        } else if (result instanceof BitmapIndexResultLazy) {
            out.put("kind", "bitmap");
            ArrayNode rows = out.putArray("rows");
            for (Iterator<Integer> it = ((BitmapIndexResultLazy) result).get().iterator();
                    it.hasNext(); ) {
                rows.add(Integer.toUnsignedLong(it.next()));
            }
        } else {
            // Some other result class: report what Java says about keeping the file.
            out.put("kind", result.remain() ? "remain" : "skip");
            out.putNull("rows");
            out.put("class", result.getClass().getName());
        }
        return out;
    }

    /**
     * Index options are given without the "file-index.<type>.<column>." prefix, the way
     * FileIndexOptions hands them to FileIndexer.create. This jar's bitmap index ignores every
     * option and always writes V1, so asking for another version is refused rather than
     * silently answered with V1 bytes.
     */
    private static Options options(String indexType, JsonNode json) {
        Map<String, String> map = new HashMap<>();
        if (json != null && !json.isNull()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = json.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                map.put(e.getKey(), e.getValue().isTextual() ? e.getValue().textValue()
                        : e.getValue().toString());
            }
        }
        if ("bitmap".equals(indexType) && map.containsKey("version")
                && !"1".equals(map.get("version").trim())
                && !classExists("org.apache.paimon.fileindex.bitmap.BitmapFileIndexMetaV2")) {
            throw new UnsupportedOperationException(
                    "this Paimon jar writes bitmap index version 1 only; version="
                            + map.get("version") + " is not available");
        }
        return new Options(map);
    }

    // ------------------------------------------------------------------------------------------
    // Java iteration orders that leak into bytes: java.util.HashMap and fastutil IntOpenHashSet
    // ------------------------------------------------------------------------------------------

    /**
     * The iteration order of a java.util.HashMap (default constructor) after "put" or
     * "compute_if_absent" of every key in turn, repeats included ("methods", one per key,
     * overrides "method" to mix both). Keys per key_type: int, short, byte, long (JSON ints;
     * long also as decimal strings), boolean, float/double (hex strings of the raw bits;
     * answered with floatToRawIntBits/doubleToRawLongBits of the key the map kept), string
     * (java.lang.String), binary_string (BinaryString.fromString).
     */
    private ObjectNode hashMapOrder(JsonNode request) {
        String keyType = text(request, "key_type");
        JsonNode keys = array(request, "keys");
        JsonNode methods = request.get("methods");
        Map<Object, Boolean> map = new HashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            Object k = javaKey(keyType, keys.get(i));
            String method = methods != null ? methods.get(i).textValue() : text(request, "method");
            if ("put".equals(method)) {
                map.put(k, Boolean.TRUE);
            } else if ("compute_if_absent".equals(method)) {
                map.computeIfAbsent(k, x -> Boolean.TRUE);
            } else {
                throw new IllegalArgumentException("unknown method: " + method);
            }
        }
        ObjectNode out = NODES.objectNode();
        ArrayNode order = out.putArray("order");
        for (Object k : map.keySet()) {
            if (k instanceof Float) {
                order.add(Integer.toHexString(Float.floatToRawIntBits((Float) k)));
            } else if (k instanceof Double) {
                order.add(Long.toHexString(Double.doubleToRawLongBits((Double) k)));
            } else if (k instanceof Long) {
                order.add(Long.toString((Long) k));
            } else if (k instanceof Boolean) {
                order.add((Boolean) k);
            } else if (k instanceof Number) {
                order.add(((Number) k).intValue());
            } else {
                order.add(k.toString());
            }
        }
        return out;
    }

    private static Object javaKey(String keyType, JsonNode v) {
        switch (keyType) {
            case "int":
                return Math.toIntExact(longValue(v));
            case "short":
                return (short) checkedRange(longValue(v), Short.MIN_VALUE, Short.MAX_VALUE);
            case "byte":
                return (byte) checkedRange(longValue(v), Byte.MIN_VALUE, Byte.MAX_VALUE);
            case "long":
                return longValue(v);
            case "boolean":
                if (!v.isBoolean()) {
                    throw new IllegalArgumentException("boolean key must be true/false: " + v);
                }
                return v.booleanValue();
            case "float":
                return Float.intBitsToFloat((int) Long.parseLong(v.textValue(), 16));
            case "double":
                return Double.longBitsToDouble(Long.parseUnsignedLong(v.textValue(), 16));
            case "string":
                return v.textValue();
            case "binary_string":
                return BinaryString.fromString(v.textValue());
            default:
                throw new IllegalArgumentException("unknown key_type: " + keyType);
        }
    }

    /** fastutil IntOpenHashSet(expected) (Paimon's shaded copy): add each value, iterate. */
    private ObjectNode intOpenHashSetOrder(JsonNode request) {
        int expected = request.has("expected") ? request.get("expected").intValue() : 16;
        org.apache.paimon.shade.it.unimi.dsi.fastutil.ints.IntOpenHashSet set =
                new org.apache.paimon.shade.it.unimi.dsi.fastutil.ints.IntOpenHashSet(expected);
        for (JsonNode v : array(request, "values")) {
            set.add(Math.toIntExact(longValue(v)));
        }
        ObjectNode out = NODES.objectNode();
        ArrayNode order = out.putArray("order");
        for (org.apache.paimon.shade.it.unimi.dsi.fastutil.ints.IntIterator it = set.iterator();
                it.hasNext(); ) {
            order.add(it.nextInt());
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------
    // Types and values
    // ------------------------------------------------------------------------------------------

    /** Paimon's own SQL type parser; TIMESTAMP_LTZ(p) is spelled out first. */
    private static DataType parseType(String sql) {
        String s = sql.trim();
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(?i)^TIMESTAMP_LTZ\\s*(\\(\\s*\\d+\\s*\\))?$")
                        .matcher(s);
        if (m.matches()) {
            s = "TIMESTAMP" + (m.group(1) == null ? "" : m.group(1)) + " WITH LOCAL TIME ZONE";
        }
        return DataTypeJsonParser.parseAtomicTypeSQLString(s);
    }

    /** JSON value -> the internal object Paimon's InternalRow would hand to an index writer. */
    private static Object toInternal(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        DataTypeRoot root = type.getTypeRoot();
        switch (root) {
            case TINYINT:
                return (byte) checkedRange(longValue(v), Byte.MIN_VALUE, Byte.MAX_VALUE);
            case SMALLINT:
                return (short) checkedRange(longValue(v), Short.MIN_VALUE, Short.MAX_VALUE);
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return Math.toIntExact(longValue(v));
            case BIGINT:
                return longValue(v);
            case BOOLEAN:
                if (!v.isBoolean()) {
                    throw new IllegalArgumentException("BOOLEAN value must be true/false: " + v);
                }
                return v.booleanValue();
            case FLOAT:
                if (v.isObject() && v.has("bits")) {
                    return Float.intBitsToFloat((int) Long.parseLong(text(v, "bits"), 16));
                }
                return (float) v.doubleValue();
            case DOUBLE:
                if (v.isObject() && v.has("bits")) {
                    return Double.longBitsToDouble(Long.parseUnsignedLong(text(v, "bits"), 16));
                }
                return v.doubleValue();
            case CHAR:
            case VARCHAR:
                if (!v.isTextual()) {
                    throw new IllegalArgumentException("string value must be a JSON string: " + v);
                }
                return BinaryString.fromString(v.textValue());
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(text(v, "b64"));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromEpochMillis(
                        longValue(v.get("millis")),
                        v.has("nanos") ? v.get("nanos").intValue() : 0);
            case DECIMAL:
                DecimalType dt = (DecimalType) type;
                return Decimal.fromBigDecimal(
                        new BigDecimal(v.isTextual() ? v.textValue() : v.asText()),
                        dt.getPrecision(),
                        dt.getScale());
            default:
                throw new UnsupportedOperationException("no value conversion for type " + type);
        }
    }

    private static long checkedRange(long v, long min, long max) {
        if (v < min || v > max) {
            throw new ArithmeticException("value " + v + " out of range");
        }
        return v;
    }

    /** Integers arrive as JSON ints or as strings of decimal digits (beyond 2^53). */
    private static long longValue(JsonNode v) {
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("missing integer");
        }
        if (v.isTextual()) {
            return Long.parseLong(v.textValue().trim());
        }
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
        }
        throw new IllegalArgumentException("not an integer: " + v);
    }

    // ------------------------------------------------------------------------------------------
    // Plumbing
    // ------------------------------------------------------------------------------------------

    private java.nio.file.Path newScratchDir() throws IOException {
        java.nio.file.Path dir = scratch.resolve("op-" + (scratchCounter++));
        Files.createDirectories(dir);
        return dir;
    }

    /** A PathFactory over one directory, shaped like Paimon's IndexFilePathFactory. */
    private static PathFactory pathFactory(java.nio.file.Path dir) {
        Path base = new Path(dir.toUri());
        return new PathFactory() {
            private int count = 0;

            @Override
            public Path newPath() {
                return new Path(base, "index-" + UUID.randomUUID() + "-" + (count++));
            }

            @Override
            public Path toPath(String fileName) {
                return new Path(base, fileName);
            }
        };
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException("missing string field '" + field + "'");
        }
        return v.textValue();
    }

    private static JsonNode array(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isArray()) {
            throw new IllegalArgumentException("missing array field '" + field + "'");
        }
        return v;
    }

    private static byte[] bytes(JsonNode node, String field) {
        return Base64.getDecoder().decode(text(node, field));
    }

    private static byte[] bytesOrNull(JsonNode v) {
        return v == null || v.isNull() ? null : Base64.getDecoder().decode(v.textValue());
    }

    private static String b64(byte[] data) {
        return Base64.getEncoder().encodeToString(data);
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    private static void deleteRecursively(java.nio.file.Path root) {
        try (Stream<java.nio.file.Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).map(java.nio.file.Path::toFile)
                    .forEach(File::delete);
        } catch (IOException ignored) {
            // best effort: it is a temp dir
        }
    }

    // ==========================================================================================
    // BEGIN benchmark ops (issue 4: writers' speed; benchmarks/build_indexes.py)
    // ==========================================================================================

    /**
     * bench_index: {"index_type", "data_type", "options"?, "column": {"kind", "rows",
     * "distinct"?, "prefix"?}, "warmup", "runs"} -> {"times_ns": [...], "median_ns",
     * "cpu_times_ns": [...], "cpu_median_ns", "collections", "length", "sha256"}. The column is
     * generated here from a formula (the same one benchmarks/build_indexes.py uses in Python)
     * and boxed once; then the index is built "warmup" times untimed (the JIT compiles) and
     * "runs" times timed, each timed build preceded by System.gc() so that no build pays for
     * the garbage of the one before. Each timed build is clocked twice: the wall clock
     * (nanoTime) and the building thread's CPU time (ThreadMXBean; -1 where the JVM cannot
     * measure it), which a machine shared with other processes does not inflate. The thread's
     * CPU time leaves out the collector's threads: "collections" counts the collections that
     * ran during the timed builds (0: the CPU clock missed no collector work).
     * A build: FileIndexer.create(...).createWriter(), writeRecord per row, serializedBytes().
     * Column kinds (row i = 0..rows-1, k = (i * 2654435761) mod distinct):
     * int_mod: (int) (k * s - distinct * s / 2) with s = Integer.MAX_VALUE / distinct;
     * string_mod: BinaryString.fromString(prefix + k); long_mul: i * 0x9E3779B97F4A7C15L (wraps);
     * file: the column benchmarks/build_indexes.py wrote (its grid of shapes): "path" holds a
     * little-endian 8-byte value per row ("value": int, long, double bits or timestamp_micros)
     * or, for "value": string, the rows' UTF-8 text separated by '\n'; "nulls" (optional) a
     * byte per row, 1 for NULL.
     */
    private ObjectNode benchIndex(JsonNode request) throws Exception {
        String indexType = text(request, "index_type");
        DataType dataType = parseType(text(request, "data_type"));
        Options options = options(indexType, request.get("options"));
        Object[] values = benchColumn(request.get("column"));
        int warmup = request.get("warmup").intValue();
        int runs = request.get("runs").intValue();
        ObjectNode out = NODES.objectNode();
        ArrayNode times = out.putArray("times_ns");
        ArrayNode cpuTimes = out.putArray("cpu_times_ns");
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        boolean cpuClock = threads.isCurrentThreadCpuTimeSupported();
        if (cpuClock && !threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        long[] measured = new long[runs];
        long[] measuredCpu = new long[runs];
        long collections = 0;
        byte[] blob = null;
        for (int it = 0; it < warmup + runs; it++) {
            boolean timed = it >= warmup;
            if (timed) {
                System.gc();
            }
            long collected = timed ? collectionCount() : 0;
            long cpuStart = cpuClock ? threads.getCurrentThreadCpuTime() : 0;
            long start = System.nanoTime();
            FileIndexWriter writer = FileIndexer.create(indexType, dataType, options).createWriter();
            for (Object value : values) {
                writer.writeRecord(value);
            }
            blob = writer.serializedBytes();
            long elapsed = System.nanoTime() - start;
            long cpu = cpuClock ? threads.getCurrentThreadCpuTime() - cpuStart : -1;
            if (timed) {
                collections += collectionCount() - collected;
                measured[it - warmup] = elapsed;
                measuredCpu[it - warmup] = cpu;
                times.add(elapsed);
                cpuTimes.add(cpu);
            }
        }
        long[] sorted = measured.clone();
        java.util.Arrays.sort(sorted);
        out.put("median_ns", runs == 0 ? -1 : sorted[runs / 2]);
        long[] sortedCpu = measuredCpu.clone();
        java.util.Arrays.sort(sortedCpu);
        out.put("cpu_median_ns", runs == 0 || !cpuClock ? -1 : sortedCpu[runs / 2]);
        out.put("collections", collections);
        out.put("length", blob == null ? -1 : blob.length);
        StringBuilder hex = new StringBuilder();
        if (blob != null) {
            for (byte b : java.security.MessageDigest.getInstance("SHA-256").digest(blob)) {
                hex.append(String.format("%02x", b & 0xff));
            }
        }
        out.put("sha256", hex.toString());
        return out;
    }

    /** The collections every collector of the JVM has run so far (-1s, "undefined", skipped). */
    private static long collectionCount() {
        long total = 0;
        for (java.lang.management.GarbageCollectorMXBean collector
                : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, collector.getCollectionCount());
        }
        return total;
    }

    private static Object[] benchColumn(JsonNode spec) throws java.io.IOException {
        String kind = text(spec, "kind");
        int rows = spec.get("rows").intValue();
        if (kind.equals("file")) {
            return fileColumn(spec, rows);
        }
        long distinct = spec.has("distinct") ? spec.get("distinct").longValue() : 1;
        Object[] values = new Object[rows];
        for (int i = 0; i < rows; i++) {
            long k = (i * 2654435761L) % distinct;
            switch (kind) {
                case "int_mod":
                    long scale = Integer.MAX_VALUE / distinct;
                    values[i] = (int) (k * scale - distinct * scale / 2);
                    break;
                case "string_mod":
                    values[i] = BinaryString.fromString(text(spec, "prefix") + k);
                    break;
                case "long_mul":
                    values[i] = i * 0x9E3779B97F4A7C15L;
                    break;
                default:
                    throw new IllegalArgumentException("unknown bench column kind: " + kind);
            }
        }
        return values;
    }

    private static Object[] fileColumn(JsonNode spec, int rows) throws java.io.IOException {
        String value = text(spec, "value");
        byte[] data = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(text(spec, "path")));
        byte[] nulls = spec.has("nulls")
                ? java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(text(spec, "nulls")))
                : new byte[rows];
        Object[] values = new Object[rows];
        if (value.equals("string")) {
            String[] lines = new String(data, java.nio.charset.StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < rows; i++) {
                values[i] = nulls[i] != 0 ? null : BinaryString.fromString(lines[i]);
            }
            return values;
        }
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(data).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < rows; i++) {
            long bits = buffer.getLong(8 * i);
            if (nulls[i] != 0) {
                continue;
            }
            switch (value) {
                case "int":
                    values[i] = (int) bits;
                    break;
                case "long":
                    values[i] = bits;
                    break;
                case "double":
                    values[i] = Double.longBitsToDouble(bits);
                    break;
                case "timestamp_micros":
                    values[i] = Timestamp.fromMicros(bits);
                    break;
                default:
                    throw new IllegalArgumentException("unknown bench file value: " + value);
            }
        }
        return values;
    }

    // ==========================================================================================
    // END benchmark ops
    // ==========================================================================================

    // ==========================================================================================
    // BEGIN table ops (issue 6: whole tables for the Spark glue; tests/spark/test_java_tables.py)
    // ==========================================================================================

    /**
     * write_table: {"warehouse", "database", "table", "fields": [{"name", "type"}],
     * "primary_keys"?, "partition_keys"?, "options"?, "commits": [[[kind, v...], ...], ...]}
     * -> {"path", "snapshot"}. Creates the table unless it exists (filesystem catalog on the
     * local warehouse), then one BatchWriteBuilder commit per entry of "commits" (with an
     * IOManager, as writes need one). kind is a RowKind short string ("+I", "-U", "+U", "-D");
     * values are encoded as for write_index, in the table's field order.
     */
    private ObjectNode writeTable(JsonNode request) throws Exception {
        org.apache.paimon.table.FileStoreTable table = openTable(request, true);
        List<DataType> types = table.rowType().getFieldTypes();
        for (JsonNode commitRows : array(request, "commits")) {
            org.apache.paimon.table.sink.BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (org.apache.paimon.disk.IOManager io =
                            org.apache.paimon.disk.IOManager.create(newScratchDir().toString());
                    org.apache.paimon.table.sink.BatchTableWrite write = builder.newWrite();
                    org.apache.paimon.table.sink.BatchTableCommit commit = builder.newCommit()) {
                write.withIOManager(io);
                for (JsonNode row : commitRows) {
                    Object[] values = new Object[types.size()];
                    for (int i = 0; i < values.length; i++) {
                        values[i] = toInternal(row.get(i + 1), types.get(i));
                    }
                    write.write(org.apache.paimon.data.GenericRow.ofKind(
                            org.apache.paimon.types.RowKind.fromShortString(row.get(0).textValue()),
                            values));
                }
                commit.commit(write.prepareCommit());
            }
        }
        return tableResponse(table);
    }

    /**
     * delete_positions: {"warehouse", "database", "table", "files": {data file name:
     * [position...]}} -> {"path", "snapshot"}. Deletion vectors for an append table, the way
     * Paimon's DELETE on a deletion-vector append table makes them: per partition and bucket an
     * AppendDeletionFileMaintainer (bucketed, or unaware for bucket -1) over the latest snapshot
     * takes each file's complete vector (BitmapDeletionVector with the given positions), persists
     * new index files, and one commit publishes them with the superseded ones removed.
     */
    private ObjectNode deletePositions(JsonNode request) throws Exception {
        org.apache.paimon.table.FileStoreTable table = openTable(request, false);
        JsonNode files = request.get("files");
        Long snapshot = table.snapshotManager().latestSnapshotId();
        org.apache.paimon.index.IndexFileHandler handler = table.store().newIndexFileHandler();
        boolean unaware = table.coreOptions().bucket() == -1;
        Map<String, org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer> maintainers =
                new LinkedHashMap<>();
        for (org.apache.paimon.manifest.ManifestEntry entry :
                table.store().newScan().plan().files()) {
            JsonNode positions = files.get(entry.file().fileName());
            if (positions == null) {
                continue;
            }
            String key = entry.partition().toString() + "/" + entry.bucket();
            org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer maintainer =
                    maintainers.get(key);
            if (maintainer == null) {
                maintainer = unaware
                        ? org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer
                                .forUnawareAppend(handler, snapshot, entry.partition())
                        : org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer
                                .forBucketedAppend(handler, snapshot, entry.partition(), entry.bucket());
                maintainers.put(key, maintainer);
            }
            BitmapDeletionVector dv = new BitmapDeletionVector();
            for (JsonNode position : positions) {
                dv.delete(longValue(position));
            }
            maintainer.notifyNewDeletionVector(entry.file().fileName(), dv);
        }
        List<org.apache.paimon.table.sink.CommitMessage> messages = new ArrayList<>();
        for (org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer maintainer :
                maintainers.values()) {
            List<IndexFileMeta> added = new ArrayList<>();
            List<IndexFileMeta> deleted = new ArrayList<>();
            for (org.apache.paimon.manifest.IndexManifestEntry e : maintainer.persist()) {
                (e.kind() == org.apache.paimon.manifest.FileKind.ADD ? added : deleted).add(e.indexFile());
            }
            messages.add(new org.apache.paimon.table.sink.CommitMessageImpl(
                    maintainer.getPartition(), maintainer.getBucket(),
                    org.apache.paimon.io.DataIncrement.emptyIncrement(),
                    org.apache.paimon.io.CompactIncrement.emptyIncrement(),
                    new org.apache.paimon.io.IndexIncrement(added, deleted)));
        }
        try (org.apache.paimon.table.sink.BatchTableCommit commit =
                table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        return tableResponse(table);
    }

    /**
     * read_table: {"warehouse", "database", "table", "snapshot"?, "options"?} -> {"fields":
     * [name...], "rows": [[kind, v...]...]}: Paimon's own batch read (ReadBuilder, every split),
     * values encoded as write_index takes them (FLOAT/DOUBLE as {"bits"} so NaN and -0.0
     * survive). "options" are dynamic table options, e.g. scan.tag-name or scan.timestamp-millis.
     */
    private ObjectNode readTable(JsonNode request) throws Exception {
        org.apache.paimon.table.FileStoreTable table = openTable(request, false);
        if (request.has("snapshot")) {
            table = table.copy(java.util.Collections.singletonMap(
                    "scan.snapshot-id", request.get("snapshot").asText()));
        }
        JsonNode dynamic = request.get("options");
        if (dynamic != null && dynamic.size() > 0) {
            Map<String, String> map = new LinkedHashMap<>();
            dynamic.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
            table = table.copy(map);
        }
        RowType rowType = table.rowType();
        ObjectNode out = NODES.objectNode();
        ArrayNode names = out.putArray("fields");
        rowType.getFieldNames().forEach(names::add);
        List<org.apache.paimon.data.InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < rowType.getFieldCount(); i++) {
            getters.add(org.apache.paimon.data.InternalRow.createFieldGetter(rowType.getTypeAt(i), i));
        }
        ArrayNode rows = out.putArray("rows");
        org.apache.paimon.table.source.ReadBuilder builder = table.newReadBuilder();
        try (org.apache.paimon.reader.RecordReader<org.apache.paimon.data.InternalRow> reader =
                builder.newRead().createReader(builder.newScan().plan().splits())) {
            reader.forEachRemaining(row -> {
                ArrayNode r = rows.addArray();
                r.add(row.getRowKind().shortString());
                for (int i = 0; i < getters.size(); i++) {
                    r.add(valueToJson(getters.get(i).getFieldOrNull(row)));
                }
            });
        }
        return out;
    }

    /**
     * create_tag: {"warehouse", "database", "table", "tag", "snapshot"} -> {"path", "snapshot"}:
     * Paimon's own tag of a snapshot (FileStoreTable.createTag: tag/tag-NAME).
     */
    private ObjectNode createTag(JsonNode request) throws Exception {
        org.apache.paimon.table.FileStoreTable table = openTable(request, false);
        table.createTag(text(request, "tag"), request.get("snapshot").asLong());
        return tableResponse(table);
    }

    /**
     * scan_table: {"warehouse", "database", "table", "filter"?, "options"?} -> {"fields",
     * "files": [{"file", "row_count", "rows_read", "sidecar_skips"}...], "pruned_at_scan":
     * [file...], "rows"}: Paimon's batch read with the filter pushed down, one split per data
     * file so that each file's outcome is seen: files the scan dropped (partition, statistics,
     * indexes embedded in the manifest with file-index.read.enabled) are in "pruned_at_scan";
     * "sidecar_skips" is Java's FileIndexSkipper verdict (what the read asks of a file's
     * `.index` sidecar; the Parquet reader's own filters may also read 0 rows). The rows are what
     * Paimon returns (the filter prunes, it does not filter rows exactly). "options" are
     * dynamic table options (e.g. file-index.read.enabled=false for a control read).
     */
    private ObjectNode scanTable(JsonNode request) throws Exception {
        org.apache.paimon.table.FileStoreTable table = openTable(request, false);
        JsonNode dynamic = request.get("options");
        if (dynamic != null && dynamic.size() > 0) {
            Map<String, String> map = new LinkedHashMap<>();
            dynamic.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
            table = table.copy(map);
        }
        RowType rowType = table.rowType();
        List<String> all = new ArrayList<>();
        for (org.apache.paimon.table.source.Split split :
                table.newReadBuilder().newScan().plan().splits()) {
            for (org.apache.paimon.io.DataFileMeta f :
                    ((org.apache.paimon.table.source.DataSplit) split).dataFiles()) {
                all.add(f.fileName());
            }
        }
        org.apache.paimon.table.source.ReadBuilder builder = table.newReadBuilder();
        JsonNode filter = request.get("filter");
        if (filter != null && !filter.isNull()) {
            builder.withFilter(tablePredicate(filter, rowType));
        }
        List<org.apache.paimon.data.InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < rowType.getFieldCount(); i++) {
            getters.add(org.apache.paimon.data.InternalRow.createFieldGetter(rowType.getTypeAt(i), i));
        }
        ObjectNode out = NODES.objectNode();
        ArrayNode names = out.putArray("fields");
        rowType.getFieldNames().forEach(names::add);
        ArrayNode files = out.putArray("files");
        ArrayNode rows = out.putArray("rows");
        org.apache.paimon.table.source.TableRead read = builder.newRead();
        List<String> kept = new ArrayList<>();
        org.apache.paimon.utils.FileStorePathFactory pathFactory = table.store().pathFactory();
        org.apache.paimon.schema.SchemaManager schemas =
                new org.apache.paimon.schema.SchemaManager(table.fileIO(), table.location());
        for (org.apache.paimon.table.source.Split split : builder.newScan().plan().splits()) {
            org.apache.paimon.table.source.DataSplit data = (org.apache.paimon.table.source.DataSplit) split;
            List<org.apache.paimon.io.DataFileMeta> metas = data.dataFiles();
            for (int i = 0; i < metas.size(); i++) {
                org.apache.paimon.io.DataFileMeta meta = metas.get(i);
                kept.add(meta.fileName());
                org.apache.paimon.table.source.DataSplit.Builder one =
                        org.apache.paimon.table.source.DataSplit.builder()
                                .withSnapshot(data.snapshotId())
                                .withPartition(data.partition())
                                .withBucket(data.bucket())
                                .withBucketPath(data.bucketPath())
                                .withDataFiles(java.util.Collections.singletonList(meta))
                                .isStreaming(false)
                                .rawConvertible(data.rawConvertible());
                final int index = i;
                data.deletionFiles().ifPresent(dvs -> one.withDataDeletionFiles(
                        java.util.Collections.singletonList(dvs.get(index))));
                long[] count = {0};
                try (org.apache.paimon.reader.RecordReader<org.apache.paimon.data.InternalRow> reader =
                        read.createReader(one.build())) {
                    reader.forEachRemaining(row -> {
                        count[0]++;
                        ArrayNode r = rows.addArray();
                        r.add(row.getRowKind().shortString());
                        for (int g = 0; g < getters.size(); g++) {
                            r.add(valueToJson(getters.get(g).getFieldOrNull(row)));
                        }
                    });
                }
                ObjectNode file = files.addObject();
                file.put("file", meta.fileName());
                file.put("row_count", meta.rowCount());
                file.put("rows_read", count[0]);
                // what RawFileSplitRead asks before reading a file: does its sidecar rule it out
                file.put("sidecar_skips", filter != null && !filter.isNull()
                        && table.coreOptions().fileIndexReadEnabled()
                        && org.apache.paimon.io.FileIndexSkipper.skip(
                                table.fileIO(), schemas.schema(meta.schemaId()),
                                org.apache.paimon.predicate.PredicateBuilder.splitAnd(
                                        tablePredicate(filter, rowType)),
                                pathFactory.createDataFilePathFactory(data.partition(), data.bucket()),
                                meta));
            }
        }
        ArrayNode pruned = out.putArray("pruned_at_scan");
        for (String name : all) {
            if (!kept.contains(name)) {
                pruned.add(name);
            }
        }
        return out;
    }

    /** A filter as JSON ({"and"|"or": [...]} or {"column", "kind", "literal"|"literals"}). */
    private static org.apache.paimon.predicate.Predicate tablePredicate(JsonNode json, RowType rowType) {
        if (json.has("and") || json.has("or")) {
            List<org.apache.paimon.predicate.Predicate> children = new ArrayList<>();
            for (JsonNode child : json.has("and") ? json.get("and") : json.get("or")) {
                children.add(tablePredicate(child, rowType));
            }
            return json.has("and")
                    ? org.apache.paimon.predicate.PredicateBuilder.and(children)
                    : org.apache.paimon.predicate.PredicateBuilder.or(children);
        }
        org.apache.paimon.predicate.PredicateBuilder builder =
                new org.apache.paimon.predicate.PredicateBuilder(rowType);
        int index = builder.indexOf(text(json, "column"));
        if (index < 0) {
            throw new IllegalArgumentException("no column " + text(json, "column"));
        }
        DataType type = rowType.getTypeAt(index);
        String kind = text(json, "kind");
        switch (kind) {
            case "equal":
                return builder.equal(index, toInternal(json.get("literal"), type));
            case "not_equal":
                return builder.notEqual(index, toInternal(json.get("literal"), type));
            case "less_than":
                return builder.lessThan(index, toInternal(json.get("literal"), type));
            case "less_or_equal":
                return builder.lessOrEqual(index, toInternal(json.get("literal"), type));
            case "greater_than":
                return builder.greaterThan(index, toInternal(json.get("literal"), type));
            case "greater_or_equal":
                return builder.greaterOrEqual(index, toInternal(json.get("literal"), type));
            case "in":
                return builder.in(index, literals(json, type));
            case "not_in":
                return builder.notIn(index, literals(json, type));
            case "is_null":
                return builder.isNull(index);
            case "is_not_null":
                return builder.isNotNull(index);
            default:
                throw new IllegalArgumentException("unknown predicate kind: " + kind);
        }
    }

    private org.apache.paimon.table.FileStoreTable openTable(JsonNode request, boolean create)
            throws Exception {
        org.apache.paimon.catalog.Catalog catalog =
                org.apache.paimon.catalog.CatalogFactory.createCatalog(
                        org.apache.paimon.catalog.CatalogContext.create(
                                new Path(text(request, "warehouse"))));
        String database = text(request, "database");
        org.apache.paimon.catalog.Identifier id =
                org.apache.paimon.catalog.Identifier.create(database, text(request, "table"));
        if (create) {
            catalog.createDatabase(database, true);
            org.apache.paimon.schema.Schema.Builder schema = org.apache.paimon.schema.Schema.newBuilder();
            for (JsonNode field : array(request, "fields")) {
                schema.column(text(field, "name"), parseType(text(field, "type")));
            }
            schema.primaryKey(stringList(request.get("primary_keys")));
            schema.partitionKeys(stringList(request.get("partition_keys")));
            JsonNode options = request.get("options");
            if (options != null) {
                options.fields().forEachRemaining(e -> schema.option(e.getKey(), e.getValue().asText()));
            }
            catalog.createTable(id, schema.build(), true);
        }
        return (org.apache.paimon.table.FileStoreTable) catalog.getTable(id);
    }

    private static List<String> stringList(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node != null) {
            node.forEach(v -> out.add(v.textValue()));
        }
        return out;
    }

    private static ObjectNode tableResponse(org.apache.paimon.table.FileStoreTable table) {
        ObjectNode out = NODES.objectNode();
        out.put("path", table.location().toString());
        Long snapshot = table.snapshotManager().latestSnapshotId();
        if (snapshot == null) {
            out.putNull("snapshot");
        } else {
            out.put("snapshot", snapshot);
        }
        return out;
    }

    /** An internal value as JSON, the inverse of toInternal. */
    private static JsonNode valueToJson(Object v) {
        if (v == null) {
            return NODES.nullNode();
        }
        if (v instanceof BinaryString) {
            return NODES.textNode(v.toString());
        }
        if (v instanceof Boolean) {
            return NODES.booleanNode((Boolean) v);
        }
        if (v instanceof Float) {
            ObjectNode bits = NODES.objectNode();
            bits.put("bits", Integer.toHexString(Float.floatToRawIntBits((Float) v)));
            return bits;
        }
        if (v instanceof Double) {
            ObjectNode bits = NODES.objectNode();
            bits.put("bits", Long.toHexString(Double.doubleToRawLongBits((Double) v)));
            return bits;
        }
        if (v instanceof Number) {
            return NODES.numberNode(((Number) v).longValue());
        }
        if (v instanceof Decimal) {
            return NODES.textNode(((Decimal) v).toBigDecimal().toPlainString());
        }
        if (v instanceof Timestamp) {
            ObjectNode ts = NODES.objectNode();
            ts.put("millis", ((Timestamp) v).getMillisecond());
            ts.put("nanos", ((Timestamp) v).getNanoOfMillisecond());
            return ts;
        }
        if (v instanceof byte[]) {
            ObjectNode b = NODES.objectNode();
            b.put("b64", b64((byte[]) v));
            return b;
        }
        throw new UnsupportedOperationException("no JSON form for " + v.getClass());
    }

    // ==========================================================================================
    // END table ops
    // ==========================================================================================
}
