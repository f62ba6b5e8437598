/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_tally.h - what an EventPipe stream holds, counted: the
 * events and payload bytes of each event type ("Provider/Name", as
 * `rtdiag nettrace stats` prints them) and of each provider.
 *
 * Fed from a decoder's callbacks (rtdiag/nettrace.h): each event type once
 * from on_metadata, each event from on_event. Memory: one entry per event
 * type and per provider (at most RTD_NETTRACE_TALLY_MAX_TYPES types), never
 * the length of the stream.
 */
#ifndef RTDIAG_NETTRACE_TALLY_H
#define RTDIAG_NETTRACE_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/nettrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most event types a tally counts; one more is -RTD_E_CAP. */
#define RTD_NETTRACE_TALLY_MAX_TYPES (1u << 20)
/* A type's name "Provider/Name" is cut to this many bytes, its provider's
 * (the name up to its first '/') to RTD_NETTRACE_TALLY_PROVIDER_MAX. */
#define RTD_NETTRACE_TALLY_NAME_MAX 1023
#define RTD_NETTRACE_TALLY_PROVIDER_MAX 511

/**
 * struct rtd_nettrace_tally_entry - one event type, or one provider
 * @name: "Provider/Name" (the metadata's provider and display name), or
 *        the provider
 * @events: its events
 * @bytes: their payload bytes
 */
struct rtd_nettrace_tally_entry {
	const char *name;
	uint64_t events;
	uint64_t bytes;
};

typedef struct rtd_nettrace_tally rtd_nettrace_tally;

/**
 * rtd_nettrace_tally_new - an empty tally
 * @out: the tally
 *
 * Returns: 0, -RTD_E_INVAL (@out NULL) or -ENOMEM.
 */
RTD_API int rtd_nettrace_tally_new(rtd_nettrace_tally **out);

/**
 * rtd_nettrace_tally_free - free a tally; NULL does nothing
 * @t: the tally
 */
RTD_API void rtd_nettrace_tally_free(rtd_nettrace_tally *t);

/**
 * rtd_nettrace_tally_metadata - an event type, from on_metadata
 * @t: the tally
 * @m: the metadata; its @user is set to the type's counter (a tally needs
 *     the decoder's @user field for itself)
 *
 * Types of one name (a provider's metadata sent again) share a counter.
 *
 * Returns: 0, -RTD_E_CAP (more than RTD_NETTRACE_TALLY_MAX_TYPES types)
 * or -ENOMEM: return it from on_metadata to stop the decoder.
 */
RTD_API int rtd_nettrace_tally_metadata(rtd_nettrace_tally *t,
					struct rtd_nettrace_metadata *m);

/**
 * rtd_nettrace_tally_event - one event, from on_event
 * @t: the tally
 * @ev: the event (its metadata given to rtd_nettrace_tally_metadata())
 */
RTD_API void rtd_nettrace_tally_event(rtd_nettrace_tally *t,
				      const struct rtd_nettrace_event *ev);

/**
 * rtd_nettrace_tally_types - the event types that had events
 * @t: the tally
 * @out: gets the entries, sorted by name (byte order); valid until the
 *       next call on @t
 * @n: gets their number
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_nettrace_tally_types(rtd_nettrace_tally *t,
				     const struct rtd_nettrace_tally_entry **out,
				     size_t *n);

/**
 * rtd_nettrace_tally_providers - every provider of an event type, with the
 * sums of its types (0 when none had an event)
 * @t: the tally
 * @out: gets the entries, sorted by name (byte order); valid until the
 *       next call on @t
 * @n: gets their number
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_nettrace_tally_providers(rtd_nettrace_tally *t,
					 const struct rtd_nettrace_tally_entry **out,
					 size_t *n);

#ifdef __cplusplus
}
#endif

#endif
