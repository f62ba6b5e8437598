/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_tracepoint.h - tracepoints of a perf monitor and their
 * fields: registering one, its kernel filter, its format's fields, and
 * decoding a sample's fields by name or index.
 */
#ifndef RTDIAG_PERF_TRACEPOINT_H
#define RTDIAG_PERF_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_monitor;
struct rtd_perf_event;
struct rtd_perf_sample;

/* Kind of a decoded tracepoint field. */
enum rtd_perf_field_kind {
	RTD_PERF_FIELD_INT = 1, /* signed integer, i */
	RTD_PERF_FIELD_UINT,    /* unsigned integer or pointer, u */
	RTD_PERF_FIELD_STRING,  /* char array or __data_loc/__rel_loc string */
	RTD_PERF_FIELD_ARRAY,   /* other arrays: bytes + elem_size */
};

/**
 * struct rtd_perf_value - one decoded tracepoint field
 * @kind: how to read it; an integer array (__u8 saddr[4]) is an ARRAY,
 *        only char arrays are STRINGs
 * @is_pointer: the field is a kernel or user pointer (the tracepoint
 *              carries its value, not what it points at)
 * @elem_size: element size of an array
 * @i: the value of an INT field
 * @u: the value of a UINT field
 * @str: a STRING field, not NUL-terminated in general; see @len
 * @data: the bytes of an ARRAY field
 * @len: bytes in @str or @data
 */
struct rtd_perf_value {
	enum rtd_perf_field_kind kind;
	bool is_pointer;
	unsigned elem_size;
	int64_t i;
	uint64_t u;
	const char *str;
	const uint8_t *data;
	size_t len;
};

/**
 * struct rtd_perf_field - a tracepoint field's description
 * @name: field name
 * @type: C type as the kernel's format file gives it
 * @offset: byte offset in the raw data
 * @size: byte size in the raw data (4 for __data_loc)
 * @kind: what rtd_perf_sample_field() returns for it
 * @is_dynamic: a __data_loc field (offset and length stored in the record)
 * @is_relative: a __rel_loc field (offset relative to the field's end)
 * @is_signed: signed integer
 * @is_pointer: a pointer value
 * @elem_size: element size of arrays
 * @print: how the event's print format shows it: an enum
 *         rtd_perf_field_print value (%pI4, %pI6c, %pM: addresses)
 */
struct rtd_perf_field {
	const char *name;
	const char *type;
	unsigned offset;
	unsigned size;
	enum rtd_perf_field_kind kind;
	bool is_dynamic;
	bool is_relative;
	bool is_signed;
	bool is_pointer;
	unsigned elem_size;
	unsigned print;
};

/* How a field's print format shows it (rtd_perf_field.print). */
enum rtd_perf_field_print {
	RTD_PERF_PRINT_DEFAULT = 0,
	RTD_PERF_PRINT_IPV4,  /* %pI4: 127.0.0.1 */
	RTD_PERF_PRINT_IPV6,  /* %pI6 / %pI6c: ::1 */
	RTD_PERF_PRINT_MAC,   /* %pM: 00:11:22:33:44:55 */
};

/**
 * rtd_perf_monitor_add_tracepoint - register a tracepoint
 * @m: monitor
 * @name: "subsystem:event" (or "subsystem/event")
 * @filter: kernel filter expression (e.g. "common_pid != 0"), or NULL
 * @out: receives the event handle (owned by @m), or NULL
 *
 * The tracepoint's format is parsed with libtraceevent so its fields can
 * be read by name with rtd_perf_sample_field().
 *
 * Returns: 0, -RTD_E_PERF_NOEVENT when tracefs has no such event,
 * -RTD_E_PERF_FILTER when the kernel rejects @filter,
 * -RTD_E_PERF_TRACEFS, or a negative errno.
 */
RTD_API int rtd_perf_monitor_add_tracepoint(struct rtd_perf_monitor *m,
					    const char *name,
					    const char *filter,
					    struct rtd_perf_event **out);

/**
 * rtd_perf_event_set_filter - set (or clear with NULL/"") a tracepoint filter
 * @ev: tracepoint or probe event
 * @filter: kernel filter expression
 *
 * Returns: 0, -RTD_E_PERF_FILTER when the kernel rejects it (the monitor's
 * rtd_perf_monitor_errmsg() names the event and the filter), or a
 * negative errno.
 */
RTD_API int rtd_perf_event_set_filter(struct rtd_perf_event *ev,
				      const char *filter);

/**
 * rtd_perf_event_nfields - number of a tracepoint's own fields
 * @ev: event (tracepoints and tracefs probes have fields)
 *
 * Returns: the count (common_* fields not included), 0 for none.
 */
RTD_API unsigned rtd_perf_event_nfields(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_field - describe a tracepoint field
 * @ev: event
 * @i: index below rtd_perf_event_nfields()
 *
 * Returns: the description, owned by the event, or NULL when out of range.
 */
RTD_API const struct rtd_perf_field *
rtd_perf_event_field(const struct rtd_perf_event *ev, unsigned i);

/**
 * rtd_perf_sample_field - decode a tracepoint field of a sample by name
 * @s: a PERF_RECORD_SAMPLE of a tracepoint or probe event
 * @name: field name (common_pid and the other common fields too)
 * @v: the value; strings and arrays point into the sample
 *
 * Every offset and length (including __data_loc/__rel_loc ones) is
 * checked against the raw data's size.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown field, -RTD_E_TRUNCATED when
 * the raw data is too short for it.
 */
RTD_API int rtd_perf_sample_field(const struct rtd_perf_sample *s,
				  const char *name, struct rtd_perf_value *v);

/**
 * rtd_perf_sample_field_at - decode the i-th field (see rtd_perf_event_field())
 * @s: sample
 * @i: field index
 * @v: the value
 *
 * Returns: as rtd_perf_sample_field().
 */
RTD_API int rtd_perf_sample_field_at(const struct rtd_perf_sample *s,
				     unsigned i, struct rtd_perf_value *v);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_TRACEPOINT_H */
