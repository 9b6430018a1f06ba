package org.joinlab.flink;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.RowKind;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The sink joinlab puts in place of a script's sink on Flink ({@code 'connector' = 'lab-capture'}).
 *
 * <p>It keeps the sink's meaning: a table with a primary key is an upsert sink (it accepts every
 * kind but UPDATE_BEFORE, as Flink's upsert sinks declare), one without is a retract sink (it
 * accepts every kind the query produces, so -U reaches it; Flink's blackhole would drop it).
 *
 * <p>It writes to the TaskManager's standard output, which the REST API serves for any cluster
 * ({@code /taskmanagers/<id>/stdout}). With {@code 'mode' = 'rows'} one line per row:
 * {@code LABROW <tab> identifier <tab> subtask <tab> kind <tab> [fields as JSON]}; with
 * {@code 'mode' = 'counts'} one line per subtask at the end of input: {@code LABCOUNTS <tab>
 * identifier <tab> subtask <tab> +I <tab> -U <tab> +U <tab> -D <tab> time}, the time (ms since
 * the epoch, the TaskManager's clock) when the subtask's input ended: the end of the job's work,
 * before a final checkpoint the job may still wait for. Rows mode writes the counts line too.
 */
public class CaptureTableSinkFactory implements DynamicTableSinkFactory {

    public static final ConfigOption<String> IDENTIFIER =
            ConfigOptions.key("identifier").stringType().noDefaultValue();
    public static final ConfigOption<String> MODE =
            ConfigOptions.key("mode").stringType().defaultValue("rows");

    @Override
    public String factoryIdentifier() {
        return "lab-capture";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Collections.singleton(IDENTIFIER);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> options = new HashSet<>();
        options.add(MODE);
        return options;
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        String mode = helper.getOptions().get(MODE);
        if (!mode.equals("rows") && !mode.equals("counts")) {
            throw new IllegalArgumentException(
                    "lab-capture: option 'mode' = '" + mode + "': expected 'rows' or 'counts'");
        }
        List<LogicalType> types = context.getPhysicalRowDataType().getLogicalType().getChildren();
        boolean keyed = context.getPrimaryKeyIndexes().length > 0;
        return new CaptureSink(
                helper.getOptions().get(IDENTIFIER), mode.equals("rows"), keyed, types);
    }

    static final class CaptureSink implements DynamicTableSink {
        private final String identifier;
        private final boolean rows;
        private final boolean keyed;
        private final List<LogicalType> types;

        CaptureSink(String identifier, boolean rows, boolean keyed, List<LogicalType> types) {
            this.identifier = identifier;
            this.rows = rows;
            this.keyed = keyed;
            this.types = types;
        }

        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
            if (!keyed) {
                return requestedMode;
            }
            ChangelogMode.Builder builder = ChangelogMode.newBuilder();
            for (RowKind kind : requestedMode.getContainedKinds()) {
                if (kind != RowKind.UPDATE_BEFORE) {
                    builder.addContainedKind(kind);
                }
            }
            return builder.build();
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
            LogicalType[] fieldTypes = types.toArray(new LogicalType[0]);
            return SinkV2Provider.of(new StdoutSink(identifier, rows, fieldTypes));
        }

        @Override
        public DynamicTableSink copy() {
            return new CaptureSink(identifier, rows, keyed, types);
        }

        @Override
        public String asSummaryString() {
            return "lab-capture(" + identifier + ")";
        }
    }

    static final class StdoutSink implements Sink<RowData> {
        private static final long serialVersionUID = 1L;
        private final String identifier;
        private final boolean rows;
        private final LogicalType[] types;

        StdoutSink(String identifier, boolean rows, LogicalType[] types) {
            this.identifier = identifier;
            this.rows = rows;
            this.types = types;
        }

        @Override
        public SinkWriter<RowData> createWriter(WriterInitContext context) {
            return new StdoutWriter(
                    identifier, context.getTaskInfo().getIndexOfThisSubtask(), rows, types);
        }
    }

    /** Buffers lines and prints them in blocks: one print call is one block of whole lines. */
    static final class StdoutWriter implements SinkWriter<RowData> {
        private static final int BLOCK = 1 << 16;
        private final String prefix;
        private final String countsPrefix;
        private final boolean rows;
        private final RowData.FieldGetter[] getters;
        private final long[] counts = new long[4];
        private final StringBuilder buffer = new StringBuilder();
        private boolean countsWritten;

        StdoutWriter(String identifier, int subtask, boolean rows, LogicalType[] types) {
            this.prefix = "LABROW\t" + identifier + "\t" + subtask + "\t";
            this.countsPrefix = "LABCOUNTS\t" + identifier + "\t" + subtask;
            this.rows = rows;
            this.getters = new RowData.FieldGetter[types.length];
            for (int i = 0; i < types.length; i++) {
                getters[i] = RowData.createFieldGetter(types[i], i);
            }
        }

        @Override
        public void write(RowData row, Context context) {
            RowKind kind = row.getRowKind();
            counts[kind.ordinal()]++;
            if (!rows) {
                return;
            }
            buffer.append(prefix).append(kind.shortString()).append('\t').append('[');
            for (int i = 0; i < getters.length; i++) {
                if (i > 0) {
                    buffer.append(',');
                }
                appendJson(buffer, getters[i].getFieldOrNull(row));
            }
            buffer.append("]\n");
            if (buffer.length() >= BLOCK) {
                emit();
            }
        }

        @Override
        public void flush(boolean endOfInput) {
            if (endOfInput) {
                writeCounts();
            }
            emit();
        }

        @Override
        public void close() {
            writeCounts();
            emit();
        }

        private void writeCounts() {
            if (countsWritten) {
                return;
            }
            countsWritten = true;
            buffer.append(countsPrefix);
            for (long c : counts) {
                buffer.append('\t').append(c);
            }
            buffer.append('\t').append(System.currentTimeMillis());
            buffer.append('\n');
        }

        private void emit() {
            if (buffer.length() > 0) {
                System.out.print(buffer);
                System.out.flush();
                buffer.setLength(0);
            }
        }

        private static void appendJson(StringBuilder out, Object value) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof Boolean) {
                out.append(value);
            } else if (value instanceof Double || value instanceof Float) {
                double d = ((Number) value).doubleValue();
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    appendString(out, Double.toString(d));
                } else {
                    out.append(Double.toString(d));
                }
            } else if (value instanceof Number) {
                out.append(value);
            } else if (value instanceof DecimalData) {
                out.append(((DecimalData) value).toBigDecimal().toPlainString());
            } else {
                appendString(out, value.toString());
            }
        }

        private static void appendString(StringBuilder out, String s) {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"':
                        out.append("\\\"");
                        break;
                    case '\\':
                        out.append("\\\\");
                        break;
                    case '\n':
                        out.append("\\n");
                        break;
                    case '\r':
                        out.append("\\r");
                        break;
                    case '\t':
                        out.append("\\t");
                        break;
                    default:
                        if (c < 0x20) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                }
            }
            out.append('"');
        }
    }
}
