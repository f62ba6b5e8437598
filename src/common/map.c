/* SPDX-License-Identifier: MIT */
#include "map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>



uint64_t rtd_hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return rtd_hash_u64(h);
}

void rtd_map_init(rtd_map *m, size_t max_entries)
{
	memset(m, 0, sizeof(*m));
	m->max = max_entries ? max_entries : SIZE_MAX / 4;
}

void rtd_map_free(rtd_map *m)
{
	if (!m)
		return;
	free(m->slots);
	m->slots = NULL;
	m->nslots = m->count = m->tomb = 0;
}

void rtd_map_free_vals(rtd_map *m)
{
	if (!m)
		return;
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(m, &it, &k, &v))
		free(v);
	rtd_map_free(m);
}

void rtd_map_clear(rtd_map *m)
{
	if (m->slots)
		memset(m->slots, 0, m->nslots * sizeof(*m->slots));
	m->count = m->tomb = 0;
}

static struct rtd_map_slot *map_find(const rtd_map *m, uint64_t key)
{
	if (!m->nslots)
		return NULL;
	size_t mask = m->nslots - 1;
	for (size_t i = rtd_hash_u64(key) & mask;; i = (i + 1) & mask) {
		struct rtd_map_slot *s = &m->slots[i];
		if (s->used == 0)
			return NULL;
		if (s->used == 1 && s->key == key)
			return s;
	}
}

static int map_grow(rtd_map *m)
{
	size_t n = m->nslots ? m->nslots : 8;
	/* grow when live entries pass half; otherwise just purge tombstones */
	if (m->count * 2 >= n)
		n *= 2;
	struct rtd_map_slot *ns = calloc(n, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < m->nslots; i++) {
		struct rtd_map_slot *s = &m->slots[i];
		if (s->used != 1)
			continue;
		size_t j = rtd_hash_u64(s->key) & (n - 1);
		while (ns[j].used)
			j = (j + 1) & (n - 1);
		ns[j] = *s;
	}
	free(m->slots);
	m->slots = ns;
	m->nslots = n;
	m->tomb = 0;
	return 0;
}

int rtd_map_put(rtd_map *m, uint64_t key, void *val, void **old)
{
	struct rtd_map_slot *s = map_find(m, key);
	if (s) {
		if (old)
			*old = s->val;
		s->val = val;
		return 0;
	}
	if (old)
		*old = NULL;
	if (m->count >= m->max)
		return -RTD_E_CAP;
	if ((m->count + m->tomb + 1) * 10 > m->nslots * 7) {
		int err = map_grow(m);
		if (err)
			return err;
	}
	size_t mask = m->nslots - 1;
	size_t i = rtd_hash_u64(key) & mask;
	while (m->slots[i].used == 1)
		i = (i + 1) & mask;
	if (m->slots[i].used == 2)
		m->tomb--;
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->slots[i].used = 1;
	m->count++;
	return 0;
}

bool rtd_map_get(const rtd_map *m, uint64_t key, void **val)
{
	struct rtd_map_slot *s = map_find(m, key);
	if (!s)
		return false;
	if (val)
		*val = s->val;
	return true;
}

void *rtd_map_del(rtd_map *m, uint64_t key)
{
	struct rtd_map_slot *s = map_find(m, key);
	if (!s)
		return NULL;
	void *v = s->val;
	s->used = 2;
	s->val = NULL;
	m->count--;
	m->tomb++;
	return v;
}

bool rtd_map_next(const rtd_map *m, size_t *it, uint64_t *key, void **val)
{
	for (; *it < m->nslots; (*it)++) {
		struct rtd_map_slot *s = &m->slots[*it];
		if (s->used == 1) {
			if (key)
				*key = s->key;
			if (val)
				*val = s->val;
			(*it)++;
			return true;
		}
	}
	return false;
}

void rtd_strmap_init(rtd_strmap *m, size_t max_entries)
{
	memset(m, 0, sizeof(*m));
	m->max = max_entries ? max_entries : SIZE_MAX / 4;
}

void rtd_strmap_free(rtd_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		rtd_strmap_entry *e = m->buckets[i];
		while (e) {
			rtd_strmap_entry *n = e->next;
			free(e);
			e = n;
		}
	}
	free(m->buckets);
	m->buckets = NULL;
	m->nbuckets = m->count = 0;
}

rtd_strmap_entry *rtd_strmap_find(const rtd_strmap *m, const void *key,
				  size_t klen)
{
	if (!m->nbuckets)
		return NULL;
	size_t i = rtd_hash_bytes(key, klen) & (m->nbuckets - 1);
	for (rtd_strmap_entry *e = m->buckets[i]; e; e = e->next)
		if (e->klen == klen && memcmp(e->key, key, klen) == 0)
			return e;
	return NULL;
}

bool rtd_strmap_get(const rtd_strmap *m, const void *key, size_t klen,
		    void **val)
{
	rtd_strmap_entry *e = rtd_strmap_find(m, key, klen);
	if (e && val)
		*val = e->val;
	return e != NULL;
}

static int strmap_grow(rtd_strmap *m)
{
	size_t n = m->nbuckets ? m->nbuckets * 2 : 16;
	rtd_strmap_entry **nb = calloc(n, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	for (size_t i = 0; i < m->nbuckets; i++) {
		rtd_strmap_entry *e = m->buckets[i];
		while (e) {
			rtd_strmap_entry *next = e->next;
			size_t j = rtd_hash_bytes(e->key, e->klen) & (n - 1);
			e->next = nb[j];
			nb[j] = e;
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = nb;
	m->nbuckets = n;
	return 0;
}

int rtd_strmap_put(rtd_strmap *m, const void *key, size_t klen, void *val)
{
	rtd_strmap_entry *e = rtd_strmap_find(m, key, klen);
	if (e) {
		e->val = val;
		return 0;
	}
	if (m->count >= m->max)
		return -RTD_E_CAP;
	if (m->count >= m->nbuckets) {
		int err = strmap_grow(m);
		if (err)
			return err;
	}
	e = malloc(sizeof(*e) + klen + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->key, key, klen);
	e->key[klen] = 0;
	e->klen = klen;
	e->val = val;
	size_t i = rtd_hash_bytes(key, klen) & (m->nbuckets - 1);
	e->next = m->buckets[i];
	m->buckets[i] = e;
	m->count++;
	return 0;
}

rtd_strmap_entry *rtd_strmap_next(const rtd_strmap *m, size_t *bucket,
				  rtd_strmap_entry *e)
{
	if (e && e->next)
		return e->next;
	if (e)
		(*bucket)++;
	for (; *bucket < m->nbuckets; (*bucket)++)
		if (m->buckets[*bucket])
			return m->buckets[*bucket];
	return NULL;
}
