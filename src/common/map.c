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

/* ---- rtd_vmap ---- */

void rtd_vmap_init(struct rtd_vmap *t, size_t vsz, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->vsz = vsz;
	t->max = max;
}

void rtd_vmap_free(struct rtd_vmap *t)
{
	free(t->keys);
	free(t->used);
	free(t->vals);
	t->keys = NULL;
	t->used = NULL;
	t->vals = NULL;
	t->n = t->cap = 0;
}

void rtd_vmap_clear(struct rtd_vmap *t)
{
	if (t->cap)
		memset(t->used, 0, t->cap);
	t->n = 0;
}

/* Double the table (64 slots first): the members rehashed into a new one,
 * the old one freed. */
static int tab_grow(struct rtd_vmap *t)
{
	struct rtd_vmap nt = *t;
	nt.cap = t->cap ? t->cap * 2 : 64;
	nt.keys = malloc(nt.cap * sizeof(*nt.keys));
	nt.used = calloc(nt.cap, 1);
	nt.vals = malloc(nt.cap * t->vsz);
	if (!nt.keys || !nt.used || !nt.vals) {
		rtd_vmap_free(&nt);
		return -ENOMEM;
	}
	size_t mask = nt.cap - 1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		size_t j = (size_t)rtd_hash_u64(t->keys[i]) & mask;
		while (nt.used[j])
			j = (j + 1) & mask;
		nt.keys[j] = t->keys[i];
		nt.used[j] = 1;
		memcpy(nt.vals + j * t->vsz, t->vals + i * t->vsz, t->vsz);
	}
	rtd_vmap_free(t);
	*t = nt; /* n, vsz and max as they were */
	return 0;
}

void *rtd_vmap_get_slow(struct rtd_vmap *t, uint64_t key, bool create, bool *created, int *err)
{
	if (created)
		*created = false;
	if (t->cap) {
		size_t i = (size_t)rtd_hash_u64(key) & (t->cap - 1);
		while (t->used[i]) {
			if (t->keys[i] == key)
				return t->vals + i * t->vsz;
			i = (i + 1) & (t->cap - 1);
		}
	}
	if (!create)
		return NULL;
	if (t->max && t->n >= t->max) {
		if (err)
			*err = -RTD_E_CAP;
		return NULL;
	}
	if ((t->n + 1) * 4 > t->cap * 3 && tab_grow(t) < 0) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	size_t i = (size_t)rtd_hash_u64(key) & (t->cap - 1);
	while (t->used[i])
		i = (i + 1) & (t->cap - 1);
	t->used[i] = 1;
	t->keys[i] = key;
	memset(t->vals + i * t->vsz, 0, t->vsz);
	t->n++;
	if (created)
		*created = true;
	return t->vals + i * t->vsz;
}

void rtd_vmap_del(struct rtd_vmap *t, uint64_t key)
{
	if (!t->cap)
		return;
	size_t mask = t->cap - 1;
	size_t i = (size_t)rtd_hash_u64(key) & mask;
	while (t->used[i] && t->keys[i] != key)
		i = (i + 1) & mask;
	if (!t->used[i])
		return;
	/* backward shift: move later members of the run into the hole when
	 * their home slot is not between the hole and them */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; t->used[j]; j = (j + 1) & mask) {
		size_t home = (size_t)rtd_hash_u64(t->keys[j]) & mask;
		bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (stays)
			continue;
		t->keys[hole] = t->keys[j];
		memcpy(t->vals + hole * t->vsz, t->vals + j * t->vsz, t->vsz);
		hole = j;
	}
	t->used[hole] = 0;
	t->n--;
}

void *rtd_vmap_next(const struct rtd_vmap *t, size_t *it, uint64_t *key)
{
	for (size_t i = *it; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		*it = i + 1;
		if (key)
			*key = t->keys[i];
		return t->vals + i * t->vsz;
	}
	*it = t->cap;
	return NULL;
}
