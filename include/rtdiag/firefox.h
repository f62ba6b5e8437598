/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/firefox.h - the Firefox Profiler's Gecko profile (version 24, the
 * shape `perf script report gecko` writes and profiler.firefox.com
 * imports) from the record stream (rtdiag/source.h).
 *
 * One thread per (pid, tid) with samples or markers: its SAMPLE records
 * (and INSTANT records with a stack) are samples with their stacks and
 * times; its slices are interval markers (an "off-cpu" slice a marker of
 * type "OffCPU" with its state, shown in the marker chart and table), its
 * other INSTANT records instant markers. Frames are "name (in module)",
 * category Kernel for kernel modules ("[kernel.kallsyms]", "[ext4]"), User
 * otherwise. Times are the records' @mono in milliseconds; the profile's
 * startTime is the first record's.
 *
 * Memory: the whole profile until rtd_firefox_write() (a Gecko profile is
 * one JSON document): about 40 bytes a sample plus each thread's distinct
 * frames and stacks, at most RTD_FIREFOX_MAX_SAMPLES samples and markers.
 */
#ifndef RTDIAG_FIREFOX_H
#define RTDIAG_FIREFOX_H

#include <stddef.h>
#include <stdio.h>

#include "rtdiag/common.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_firefox rtd_firefox;

/* Samples and markers of one profile, at most. */
#define RTD_FIREFOX_MAX_SAMPLES (1u << 24)

/**
 * struct rtd_firefox_opts - options for rtd_firefox_new()
 * @sz: sizeof(struct rtd_firefox_opts)
 * @product: meta.product (NULL: "rtdiag")
 */
struct rtd_firefox_opts {
	size_t sz;
	const char *product;
};

/**
 * rtd_firefox_new - an empty Gecko profile
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Returns: the profile, or NULL: -RTD_E_INVAL, -ENOMEM.
 */
RTD_API rtd_firefox *rtd_firefox_new(const struct rtd_firefox_opts *opts, int *err);

/**
 * rtd_firefox_add - one record into the profile
 * @ff: the profile
 * @rec: the record; its strings and stack must live until
 *       rtd_firefox_write() (a source's interned ones do while it lives)
 *
 * Returns: 0; an ERROR record's code; -RTD_E_CAP, -ENOMEM.
 */
RTD_API int rtd_firefox_add(rtd_firefox *ff, const struct rtd_record *rec);

/**
 * rtd_firefox_pull - every record of a source into the profile
 * @ff: the profile
 * @src: the source, pulled to its end
 *
 * Returns: 0 at its end, the source's error, or the profile's.
 */
RTD_API int rtd_firefox_pull(rtd_firefox *ff, rtd_source *src);

/**
 * rtd_firefox_write - write the profile as JSON
 * @ff: the profile
 * @f: where
 * @samples: gets the samples written (may be NULL)
 *
 * Returns: 0, -EIO, -ENOMEM.
 */
RTD_API int rtd_firefox_write(rtd_firefox *ff, FILE *f, size_t *samples);

/**
 * rtd_firefox_free - free a profile
 * @ff: the profile; NULL does nothing
 */
RTD_API void rtd_firefox_free(rtd_firefox *ff);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_FIREFOX_H */
