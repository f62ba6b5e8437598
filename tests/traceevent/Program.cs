// te-dump [--count|--json] FILE
//
// Reads a .nettrace/.netperf file with TraceEvent 4.0.0's EventPipeEventSource
// and the parsers a person would register (Clr, ClrPrivate, ClrRundown,
// SampleProfiler, GCDynamic, Tpl as TraceLog registers it, Dynamic for
// EventSources), then:
//   --json  (default) one JSON object per event, in TraceEvent's order:
//           {"p":provider,"n":EventName,"id":ID,"v":Version,"op":Opcode,
//            "opn":OpcodeName,"task":TaskName,"ts":TimeStampQPC,
//            "tid":ThreadID,"cpu":ProcessorNumber,"act":...,"rel":...,
//            "f":{PayloadNames[i]: PayloadValue(i)}, "e":{enum field: name}}
//           Floats as .NET's round-trip text; NaN and infinities as the
//           strings "NaN", "Infinity", "-Infinity"; enums as their number
//           (their name under "e"); byte arrays as hex; structs as objects.
//   --count only parse and count (bench/nettrace: TraceEvent's own speed).
// Exit 0, or 1 with the exception on stderr.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

static class Program
{
    static Utf8JsonWriter w;

    static int Main(string[] args)
    {
        string mode = "--json", path = null;
        foreach (var a in args)
            if (a.StartsWith("--")) mode = a; else path = a;
        if (path == null) { Console.Error.WriteLine("usage: te-dump [--count|--json] FILE"); return 2; }
        long n = 0;
        var stdout = new BufferedStream(Console.OpenStandardOutput(), 1 << 16);
        outs = stdout;
        w = new Utf8JsonWriter(stdout, new JsonWriterOptions { SkipValidation = true,
            Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
        try
        {
            using var source = new EventPipeEventSource(path);
            Action<TraceEvent> none = e => { };
            source.Clr.All += none;
            new ClrPrivateTraceEventParser(source).All += none;
            new ClrRundownTraceEventParser(source).All += none;
            new SampleProfilerTraceEventParser(source).All += none;
            new GCDynamicTraceEventParser(source).All += none;
            new TplEtwProviderTraceEventParser(source).All += none;
            source.Dynamic.All += none;
            if (mode == "--count")
                source.AllEvents += e => n++;
            else
                source.AllEvents += e => { n++; Dump(e); };
            source.Process();
        }
        catch (Exception ex)
        {
            w.Flush(); stdout.Flush();
            Console.Error.WriteLine($"te-dump: {path}: after {n} events: {ex}");
            return 1;
        }
        w.Flush();
        stdout.Flush();
        if (mode == "--count")
            Console.WriteLine($"events {n}");
        return 0;
    }

    static void Dump(TraceEvent e)
    {
        w.WriteStartObject();
        w.WriteString("p", e.ProviderName);
        w.WriteString("n", e.EventName);
        w.WriteNumber("id", (int)e.ID);
        w.WriteNumber("v", e.Version);
        w.WriteNumber("op", (int)e.Opcode);
        w.WriteString("opn", e.OpcodeName);
        w.WriteString("task", e.TaskName);
        w.WriteNumber("ts", e.TimeStampQPC);
        w.WriteNumber("tid", e.ThreadID);
        w.WriteNumber("cpu", e.ProcessorNumber);
        if (e.ActivityID != Guid.Empty) w.WriteString("act", e.ActivityID.ToString());
        if (e.RelatedActivityID != Guid.Empty) w.WriteString("rel", e.RelatedActivityID.ToString());
        w.WritePropertyName("f");
        w.WriteStartObject();
        List<KeyValuePair<string, string>> enums = null;
        string[] names = e.PayloadNames ?? Array.Empty<string>();
        for (int i = 0; i < names.Length; i++)
        {
            object v;
            try { v = e.PayloadValue(i); }
            catch (Exception ex) { v = new ErrorValue(ex.GetType().Name); }
            w.WritePropertyName(names[i] ?? "");
            if (v is Enum en)
            {
                (enums ??= new()).Add(new(names[i], en.ToString()));
            }
            Value(v);
        }
        w.WriteEndObject();
        if (enums != null)
        {
            w.WritePropertyName("e");
            w.WriteStartObject();
            foreach (var kv in enums) w.WriteString(kv.Key, kv.Value);
            w.WriteEndObject();
        }
        w.WriteEndObject();
        // one object per line: Utf8JsonWriter writes no separator itself
        w.Flush();
        w.Reset();
        outs.WriteByte((byte)'\n');
    }

    static Stream outs;

    sealed class ErrorValue { public string What; public ErrorValue(string s) { What = s; } }

    static void Value(object v)
    {
        switch (v)
        {
            case null: w.WriteNullValue(); break;
            case ErrorValue ev: w.WriteStringValue("<error " + ev.What + ">"); break;
            case bool b: w.WriteBooleanValue(b); break;
            case string s: w.WriteStringValue(s); break;
            case Enum en: w.WriteNumberValue(Convert.ToInt64(en) is long l && l >= 0 ? (decimal)Convert.ToUInt64(en) : Convert.ToInt64(en)); break;
            case sbyte x: w.WriteNumberValue(x); break;
            case byte x: w.WriteNumberValue(x); break;
            case short x: w.WriteNumberValue(x); break;
            case ushort x: w.WriteNumberValue(x); break;
            case int x: w.WriteNumberValue(x); break;
            case uint x: w.WriteNumberValue(x); break;
            case long x: w.WriteNumberValue(x); break;
            case ulong x: w.WriteNumberValue(x); break;
            case char c: w.WriteStringValue(c.ToString()); break;
            case float f: Float(f, float.IsNaN(f), float.IsPositiveInfinity(f), float.IsNegativeInfinity(f), f.ToString("R", CultureInfo.InvariantCulture)); break;
            case double d: Float(d, double.IsNaN(d), double.IsPositiveInfinity(d), double.IsNegativeInfinity(d), d.ToString("R", CultureInfo.InvariantCulture)); break;
            case decimal m: w.WriteStringValue(m.ToString(CultureInfo.InvariantCulture)); break;
            case Guid g: w.WriteStringValue(g.ToString()); break;
            case DateTime t: w.WriteStringValue(t.ToUniversalTime().ToString("yyyy-MM-ddTHH:mm:ss.fffffffZ", CultureInfo.InvariantCulture)); break;
            case byte[] bytes: w.WriteStringValue(Convert.ToHexString(bytes).ToLowerInvariant()); break;
            case IDictionary<string, object> d:
                w.WriteStartObject();
                foreach (var kv in d) { w.WritePropertyName(kv.Key); Value(kv.Value); }
                w.WriteEndObject();
                break;
            case IEnumerable list:
                w.WriteStartArray();
                foreach (var x in list) Value(x);
                w.WriteEndArray();
                break;
            default: w.WriteStringValue(v.ToString()); break;
        }
    }

    static void Float(double d, bool nan, bool pinf, bool ninf, string text)
    {
        if (nan) w.WriteStringValue("NaN");
        else if (pinf) w.WriteStringValue("Infinity");
        else if (ninf) w.WriteStringValue("-Infinity");
        else w.WriteRawValue(text, skipInputValidation: true);
    }
}
