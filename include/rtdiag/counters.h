/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/counters.h - live counter values of a .NET process: EventCounters
 * (EventSource counters, EventCounterIntervalSec) and System.Diagnostics.
 * Metrics meters (counters, up-down counters, gauges, histograms with
 * percentiles, observable instruments, tags), as the runtime publishes
 * them over EventPipe in .NET 8-10.
 *
 * rtd_counters_request() turns dotnet-counters' --counters syntax into the
 * session's providers; rtd_counters_event() turns the session's events
 * into a stream of typed records (struct rtd_counter_record), one per
 * counter and interval, filtered by the names asked for;
 * rtd_counters_record() does the same from a nettrace source's records
 * (rtdiag/source.h), with the same results.
 */
#ifndef RTDIAG_COUNTERS_H
#define RTDIAG_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum rtd_counter_kind - what a record's value is
 * @RTD_COUNTER_MEAN: an EventCounter or PollingCounter: the mean of the
 *                    interval's values (@value), with @min, @max, @count
 * @RTD_COUNTER_SUM: an IncrementingEventCounter / IncrementingPolling-
 *                   Counter: the increment over the interval (@value)
 * @RTD_COUNTER_RATE: a Meter Counter (or ObservableCounter): the change
 *                    in the interval (@value) and the total (@total)
 * @RTD_COUNTER_UPDOWN: a Meter UpDownCounter (or observable): the current
 *                      value (@value) and the change in the interval
 *                      (@total)
 * @RTD_COUNTER_GAUGE: a Meter Gauge / ObservableGauge: the last value
 * @RTD_COUNTER_HISTOGRAM: a Meter Histogram: @count and @sum of the
 *                         interval's measurements and their percentiles
 *                         (@quantile/@qvalue); @value is the 0.5 one
 */
enum rtd_counter_kind {
	RTD_COUNTER_MEAN,
	RTD_COUNTER_SUM,
	RTD_COUNTER_RATE,
	RTD_COUNTER_UPDOWN,
	RTD_COUNTER_GAUGE,
	RTD_COUNTER_HISTOGRAM,
};

#define RTD_COUNTER_MAX_QUANTILES 8

/**
 * struct rtd_counter_record - one counter's value for one interval
 * @kind: what @value is
 * @provider: the EventSource or Meter name
 * @name: the counter's or instrument's name ("cpu-usage", "requests")
 * @display_name: an EventCounter's display name ("CPU Usage"); "" for
 *                meters
 * @unit: the unit ("%", "MB", "ms", "{request}"); "" when none
 * @tags: a meter measurement's tags, "k=v,k2=v2"; "" when none
 * @value: see enum rtd_counter_kind
 * @total: RATE: the total since the instrument began to be reported;
 *         UPDOWN: the change in the interval
 * @min: MEAN: the smallest value in the interval
 * @max: MEAN: the largest
 * @count: MEAN: values in the interval; HISTOGRAM: measurements
 * @sum: HISTOGRAM: their sum
 * @interval_sec: the interval (EventCounters; meters: 0)
 * @timestamp: the event's timestamp (ticks of the trace's clock)
 * @nquantiles: HISTOGRAM: how many percentiles follow
 * @quantile: their quantiles (0.5, 0.95, 0.99)
 * @qvalue: their values
 * @has_value: false when the interval carried no number where @value
 *             goes (an observable instrument whose callback threw or
 *             gave no measurement; a RATE's empty rate, as an
 *             ObservableCounter's first interval has): dotnet-counters
 *             shows nothing for it
 * @has_total: RATE, UPDOWN: @total was a number (an ObservableUpDown-
 *             Counter's first interval has no change: @total is then
 *             @value, as dotnet-counters takes it)
 * @meter_tags: the tags the meter was created with (from the session's
 *              BeginInstrumentReporting); "" when none or unknown
 * @instrument_tags: the tags the instrument was created with; ""
 *
 * Strings are borrowed for the callback's duration.
 */
struct rtd_counter_record {
	enum rtd_counter_kind kind;
	const char *provider;
	const char *name;
	const char *display_name;
	const char *unit;
	const char *tags;
	double value;
	double total;
	double min, max, count, sum;
	double interval_sec;
	uint64_t timestamp;
	size_t nquantiles;
	double quantile[RTD_COUNTER_MAX_QUANTILES];
	double qvalue[RTD_COUNTER_MAX_QUANTILES];
	bool has_value, has_total;
	const char *meter_tags, *instrument_tags;
};

/**
 * typedef rtd_counter_fn - receives each record
 * @ctx: as given to rtd_counters_new()
 * @r: the record, borrowed during the call
 *
 * Returns: 0 to go on; anything else is returned by rtd_counters_event().
 */
typedef int (*rtd_counter_fn)(void *ctx, const struct rtd_counter_record *r);

typedef struct rtd_counters rtd_counters;

/**
 * rtd_counters_new - a counter reader
 * @spec: what to keep, in dotnet-counters' --counters syntax:
 *        "Provider[,Provider[name1,name2]]..." where Provider is an
 *        EventSource or a Meter name and the names in brackets the
 *        counters or instruments to keep (all when absent); NULL or ""
 *        for "System.Runtime". "EventCounters\\Provider" asks for the
 *        EventSource's counters only (no meter of that name), as
 *        dotnet-counters' prefix does
 * @fn: receives the records
 * @ctx: passed to @fn
 * @err: receives a message naming a malformed part (may be NULL)
 * @errlen: size of @err
 *
 * Returns: the reader, or NULL: a malformed @spec (message in @err) or no
 * memory.
 */
RTD_API rtd_counters *rtd_counters_new(const char *spec, rtd_counter_fn fn,
				       void *ctx, char *err, size_t errlen);

/**
 * rtd_counters_free - free a reader
 * @c: the reader; NULL does nothing
 */
RTD_API void rtd_counters_free(rtd_counters *c);

/**
 * rtd_counters_prefer_meters - a provider's meter over its EventCounters,
 *                              as dotnet-counters shows them
 * @c: the reader
 * @hold_sec: how long after a provider's first EventCounters value its
 *            records are held, in case a meter of the same name publishes
 *            (dotnet-counters: 1 s)
 *
 * A provider name may be both an EventSource and a Meter (System.Runtime
 * is, from .NET 9): dotnet-counters then shows the meter's instruments
 * and drops the EventCounters, unless asked for "EventCounters\\Name".
 * With this, the reader does the same: EventCounters records of a
 * provider are held @hold_sec after its first one, dropped once a meter
 * of that name publishes a value, else given out (in order, when a later
 * event the reader reads passes the hold, or by rtd_counters_flush()).
 * Without it every record is given out at once.
 */
RTD_API void rtd_counters_prefer_meters(rtd_counters *c, double hold_sec);

/**
 * rtd_counters_flush - give out the records still held
 * @c: the reader (NULL does nothing)
 *
 * Call at the session's end (see rtd_counters_prefer_meters()).
 *
 * Returns: 0 or what the callback returned.
 */
RTD_API int rtd_counters_flush(rtd_counters *c);

/**
 * rtd_counters_request - the session providers that publish the counters
 * @c: the reader
 * @interval_sec: how often values are published (> 0)
 * @session_id: an id for the Metrics session (its events carry it; those
 *              of other sessions are ignored)
 * @out: receives the providers (appended to): each provider of the spec as
 *       an EventSource with EventCounterIntervalSec, and one
 *       System.Diagnostics.Metrics provider listing the meters (and
 *       instruments) for the meters' values
 *
 * Returns: 0, -RTD_E_INVAL or -ENOMEM.
 */
RTD_API int rtd_counters_request(rtd_counters *c, double interval_sec,
				 const char *session_id,
				 struct rtd_ipc_providers *out);

/**
 * rtd_counters_event - read one event of the session
 * @c: the reader
 * @dec: the decoder that delivered @ev
 * @ev: any event; EventCounters events and the Metrics EventSource's
 *      value events of the providers asked for become records
 *
 * Returns: 0, what the callback returned, or -ENOMEM.
 */
RTD_API int rtd_counters_event(rtd_counters *c, rtd_nettrace *dec,
			       const struct rtd_nettrace_event *ev);

/**
 * rtd_counters_record - read one record of a nettrace source
 * @c: the reader
 * @clock: the source's clock (rtd_source_clock(), asked after its first
 *         record): its @freq times the hold of
 *         rtd_counters_prefer_meters(); may be NULL without the hold
 * @rec: any record; an INSTANT of an EventCounters event or of the
 *       Metrics EventSource's value events, from a nettrace source
 *       (rtdiag/nettrace_source.h) made without @top_fields (so an
 *       EventCounters' nested Payload values are its fields), becomes
 *       records as rtd_counters_event() makes them of the event
 *
 * The same reader, records and results as rtd_counters_event() given
 * the decoder's events in the same order (stream order or sorted, as
 * the source's @stream_order), whether or not the source is filtered by
 * rtd_counters_want(): only the events the reader reads move it. One
 * difference: a payload shorter than its layout is dropped by
 * rtd_counters_event(), while the source keeps the fields before its
 * end (a damaged event, never one the runtime writes).
 *
 * Returns: 0, what the callback returned, -RTD_E_INVAL (no @c or @rec)
 * or -ENOMEM.
 */
RTD_API int rtd_counters_record(rtd_counters *c, const struct rtd_clock *clock,
				const struct rtd_record *rec);

/**
 * rtd_counters_want - the event types the reader reads
 * @ctx: the reader (an rtd_counters *)
 * @m: an event type
 *
 * A filter for a nettrace source's @want (with @want_ctx the reader):
 * "EventCounters" of the providers in the spec, and the Metrics
 * EventSource's value, BeginInstrumentReporting and error events. A
 * caller that also feeds another consumer from the same source asks
 * both (the OR of their filters).
 *
 * Returns: true for a type the reader uses; false otherwise (a NULL @ctx
 * or @m too).
 */
RTD_API bool rtd_counters_want(void *ctx, const struct rtd_nettrace_metadata *m);

/**
 * rtd_counters_fields - the fields the reader reads of an event type
 * @ctx: the reader (an rtd_counters *)
 * @m: an event type
 *
 * For a nettrace source's @fields (with @fields_ctx the reader): all of
 * a type rtd_counters_want() takes (an EventCounters' one Payload holds
 * every value; the Metrics events' fields are read by name), none of the
 * others. A @field_want beside it must keep every field of those types.
 *
 * Returns: SIZE_MAX (all) or 0 (none).
 */
RTD_API size_t rtd_counters_fields(void *ctx, const struct rtd_nettrace_metadata *m);

/**
 * rtd_counters_errors - what the Metrics EventSource reported as errors
 * @c: the reader
 *
 * Returns: the latest error message of the session (a limit on time
 * series or histograms reached, an observable callback that threw, a
 * second session refused), or NULL.
 */
RTD_API const char *rtd_counters_errors(const rtd_counters *c);

/**
 * rtd_counters_silent - a provider asked for that gave no value
 * @c: the reader
 * @i: 0, 1, ... in turn
 *
 * Returns: the @i-th provider or meter of the spec that has produced no
 * record so far (no such EventSource or Meter in the process, or none of
 * the names asked for), or NULL after the last.
 */
RTD_API const char *rtd_counters_silent(const rtd_counters *c, size_t i);

/**
 * rtd_counter_kind_name - a kind's "Counter Type" as dotnet-counters
 *                         collect writes it
 * @kind: an enum rtd_counter_kind value
 *
 * Returns: "Rate" for what is reported by its change over the interval
 * (EventCounter increments, meter Counters and ObservableCounters),
 * "Metric" for the rest.
 */
RTD_API const char *rtd_counter_kind_name(unsigned kind);

/**
 * enum rtd_counter_view - whose presentation of the records
 * @RTD_COUNTER_VIEW_COLLECT: dotnet-counters collect (CSV and JSON): a
 *     meter Counter or ObservableCounter by its change over the interval,
 *     "name (unit / N sec)", type "Rate" (no unit: "Count")
 * @RTD_COUNTER_VIEW_MONITOR: dotnet-counters monitor's table: a meter
 *     Counter or ObservableCounter by its total, "name (unit)", type
 *     "Metric" (monitor asks for rate-and-value payloads, collect does not)
 *
 * Both: an UpDownCounter, ObservableUpDownCounter or gauge by its value,
 * "name (unit)" or "name", "Metric"; a histogram as one value per
 * percentile, its tags ending "Percentile=50" (95, 99), "Metric"; an
 * EventCounter by its mean, "Display Name (unit)", "Metric"; an
 * incrementing EventCounter by its increment, "Display Name (unit /
 * N sec)" (no unit or "count": "Count"), "Rate".
 */
enum rtd_counter_view {
	RTD_COUNTER_VIEW_COLLECT,
	RTD_COUNTER_VIEW_MONITOR,
};

#define RTD_COUNTER_NAME_MAX 640
#define RTD_COUNTER_TAGS_MAX 1100

/**
 * struct rtd_counter_value - one value as dotnet-counters shows it
 * @name: the name as dotnet-counters shows it (its GetDisplay()),
 *        "requests ({request} / 1 sec)", "Working Set (MB)"
 * @tags: the value's tags, "route=/a,Percentile=50" ("" when none):
 *        dotnet-counters' JSON "tags"
 * @meter_tags: the meter's own tags (JSON "meterTags")
 * @instrument_tags: the instrument's own tags (JSON "instrumentTags")
 * @all_tags: the three joined, meter's first: what dotnet-counters' CSV
 *            appends to the name, "[region=eu;route=/a]" (',' as ';')
 * @type: "Rate" or "Metric" (its "Counter Type")
 * @value: the number
 */
struct rtd_counter_value {
	char name[RTD_COUNTER_NAME_MAX];
	char tags[RTD_COUNTER_TAGS_MAX];
	char meter_tags[RTD_COUNTER_TAGS_MAX];
	char instrument_tags[RTD_COUNTER_TAGS_MAX];
	char all_tags[3 * RTD_COUNTER_TAGS_MAX];
	const char *type;
	double value;
};

/**
 * rtd_counter_values - a record as the values dotnet-counters shows for it
 * @r: a record
 * @view: collect's or monitor's presentation
 * @interval_sec: the refresh interval asked for, whole seconds (the
 *                "/ N sec" of the names)
 * @out: receives the values
 * @max: room in @out (a histogram gives one per percentile: at most
 *       RTD_COUNTER_MAX_QUANTILES)
 *
 * Returns: how many values were written to @out, 0 when dotnet-counters
 * shows nothing for the record's interval (see @has_value), or
 * -RTD_E_INVAL (no @r or @out, an unknown kind or view) or -RTD_E_CAP
 * (@max too small, a name or tags longer than the fields hold).
 */
RTD_API int rtd_counter_values(const struct rtd_counter_record *r,
			       enum rtd_counter_view view, unsigned interval_sec,
			       struct rtd_counter_value *out, size_t max);

/**
 * rtd_counter_format - a counter's value as a person reads it
 * @value: the value
 * @unit: its unit as the record gives it ("By", "bytes", "B", "MB", "%",
 *        ""), or NULL
 * @buf: where to write
 * @len: its size (32 is enough)
 *
 * Bytes ("By", "B", "bytes", and rates of them) in the largest decimal
 * unit that keeps the number at 1 or more, as dotnet-counters' values
 * and perf's sizes read: "2.22 GB", "512 B"; other whole numbers in full
 * ("1234567", never "1.23457e+06"); fractions with up to 6 significant
 * digits.
 *
 * Returns: @buf.
 */
RTD_API const char *rtd_counter_format(double value, const char *unit,
				       char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
