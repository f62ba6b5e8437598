/* SPDX-License-Identifier: MIT */
/*
 * map.h - hash maps: u64 keys (rtd_map; rtd_vmap, its values held in the
 * table) and byte-string keys (rtd_strmap).
 *
 * Open addressing with linear probing; the table doubles at 70% load.
 * Each map has a cap on its entry count set at init (0: no cap but memory);
 * inserting past it fails with -RTD_E_CAP, so maps filled from input stay
 * bounded.
 */
#ifndef RTD_COMMON_MAP_H
#define RTD_COMMON_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

/* 64-bit hash of bytes (FNV-1a folded through a final mixer). */
uint64_t rtd_hash_bytes(const void *p, size_t n);
/* Mix a 64-bit integer into a well-spread hash. */
static inline uint64_t rtd_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

struct rtd_map_slot {
	uint64_t key;
	void *val;
	uint8_t used; /* 0 empty, 1 full, 2 deleted */
};

typedef struct rtd_map {
	struct rtd_map_slot *slots;
	size_t nslots; /* power of two, or 0 */
	size_t count;  /* live entries */
	size_t tomb;   /* deleted slots */
	size_t max;    /* cap on count */
} rtd_map;

void rtd_map_init(rtd_map *m, size_t max_entries);
void rtd_map_free(rtd_map *m);
/* free() every value, then rtd_map_free(): for maps that own their values. */
void rtd_map_free_vals(rtd_map *m);
/* Remove every entry, keep the table. */
void rtd_map_clear(rtd_map *m);
/* Insert or replace. Returns 0, -RTD_E_CAP or -ENOMEM. *old gets the
 * replaced value (or NULL) when old is not NULL. */
int rtd_map_put(rtd_map *m, uint64_t key, void *val, void **old);
/* Lookup: true when present (value in *val if val is not NULL). */
bool rtd_map_get(const rtd_map *m, uint64_t key, void **val);
/* Remove: returns the removed value or NULL. */
void *rtd_map_del(rtd_map *m, uint64_t key);
/* Iterate: start with *it = 0; returns false at the end. */
bool rtd_map_next(const rtd_map *m, size_t *it, uint64_t *key, void **val);

typedef struct rtd_strmap_entry {
	struct rtd_strmap_entry *next;
	void *val;
	size_t klen;
	char key[]; /* NUL-terminated copy */
} rtd_strmap_entry;

typedef struct rtd_strmap {
	rtd_strmap_entry **buckets;
	size_t nbuckets; /* power of two, or 0 */
	size_t count;
	size_t max;
} rtd_strmap;

void rtd_strmap_init(rtd_strmap *m, size_t max_entries);
/* Frees the entries (keys are copies); values are the caller's. */
void rtd_strmap_free(rtd_strmap *m);
/* Insert or replace; copies the key. Returns 0, -RTD_E_CAP or -ENOMEM. */
int rtd_strmap_put(rtd_strmap *m, const void *key, size_t klen, void *val);
bool rtd_strmap_get(const rtd_strmap *m, const void *key, size_t klen,
		    void **val);
/* Like get, but returns the stored key copy too (stable until removed). */
rtd_strmap_entry *rtd_strmap_find(const rtd_strmap *m, const void *key,
				  size_t klen);
/* Iterate: start with *bucket = 0 and *e = NULL. */
rtd_strmap_entry *rtd_strmap_next(const rtd_strmap *m, size_t *bucket,
				  rtd_strmap_entry *e);

/*
 * struct rtd_vmap - u64 keys to fixed-size values held in the table (the
 * Go decoder's and analyses' per-goroutine, per-P and per-stack state,
 * looked up for nearly every event). Linear probing, doubling past 75%
 * load, deletion by backward shift (no tombstones). A value pointer is
 * valid until the next insert or delete.
 */
struct rtd_vmap {
	uint64_t *keys;
	uint8_t *used;
	uint8_t *vals;
	size_t vsz, n, cap, max;
};

/* vsz: each value's size (0: a set); max: cap on the entries (0: none). */
void rtd_vmap_init(struct rtd_vmap *t, size_t vsz, size_t max);
void rtd_vmap_free(struct rtd_vmap *t);
/* Remove every entry, keep the table. */
void rtd_vmap_clear(struct rtd_vmap *t);
/* Find, or insert a zeroed value when create; NULL when absent, on the
 * cap or out of memory (*err, when err is not NULL: -RTD_E_CAP or
 * -ENOMEM). *created (when not NULL) says whether it was inserted. */
void *rtd_vmap_get_slow(struct rtd_vmap *t, uint64_t key, bool create,
			bool *created, int *err);
/* The same, the common hit in the key's home slot inlined. */
static inline void *rtd_vmap_get(struct rtd_vmap *t, uint64_t key, bool create,
				 bool *created, int *err)
{
	if (t->cap) {
		size_t i = (size_t)rtd_hash_u64(key) & (t->cap - 1);
		if (t->used[i] && t->keys[i] == key) {
			if (created)
				*created = false;
			return t->vals + i * t->vsz;
		}
	}
	return rtd_vmap_get_slow(t, key, create, created, err);
}
void rtd_vmap_del(struct rtd_vmap *t, uint64_t key);
/* Iterate: *it = 0 first; returns the value or NULL at the end. */
void *rtd_vmap_next(const struct rtd_vmap *t, size_t *it, uint64_t *key);

#endif /* RTD_COMMON_MAP_H */
