/* SPDX-License-Identifier: MIT */
/*
 * The MDT's LMDB environment: one env, one named database per enum
 * mds_table, opened once and kept for the life of the env.  This is the
 * only file that includes <lmdb.h>; every LMDB code is converted here.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <lmdb.h>

#include "common/log.h"
#include "mds/db.h"

#define DB_DEFAULT_MAP_SIZE (1ull << 30)

static const char *const db_table_names[MDS_T_COUNT] = {
	[MDS_T_CONFIG] = "config",
	[MDS_T_INODES] = "inodes",
	[MDS_T_DIRENTS] = "dirents",
	[MDS_T_DIRCOOKIES] = "dircookies",
	[MDS_T_XATTRS] = "xattrs",
	[MDS_T_OSTS] = "osts",
	[MDS_T_DESTROY] = "destroy",
	[MDS_T_PACKS] = "packs",
	[MDS_T_PACKFILES] = "packfiles",
	[MDS_T_CHANGELOG] = "changelog",
	[MDS_T_POOLS] = "pools",
	[MDS_T_REPLIES] = "replies",
};

struct mds_db {
	MDB_env *db_env;
	MDB_dbi db_dbi[MDS_T_COUNT];
};

struct mds_txn {
	struct mds_db *tx_db;
	MDB_txn *tx_txn;
	bool tx_rdonly;
	bool tx_borrowed;	/* tx_txn is the batch's: never ended here */
};

struct mds_cursor {
	MDB_cursor *cu_cur;
};

/*
 * LMDB returns its own MDB_* codes and plain errno values.  The expected
 * ones map to errno meanings the namespace code acts on; anything else is a
 * fault of the store and becomes -EIO after a log line, so that callers
 * never see an LMDB number.
 */
static int db_err(int rc, const char *what)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_KEYEXIST:
		return -EEXIST;
	case MDB_MAP_FULL:
	case MDB_TXN_FULL:
	case ENOSPC:
		return -ENOSPC;
	case ENOMEM:
		return -ENOMEM;
	case EACCES:
		nc_error("mds", "lmdb %s: %s", what, mdb_strerror(rc));
		return -EACCES;
	default:
		nc_error("mds", "lmdb %s: %s", what, mdb_strerror(rc));
		return -EIO;
	}
}

static bool db_table_ok(enum mds_table t)
{
	return (unsigned int)t < MDS_T_COUNT;
}

/* Opens every named database once, inside one write transaction, so the
 * handles are valid for every later transaction of this env. */
static int db_open_tables(struct mds_db *db)
{
	MDB_txn *txn;
	int rc;

	rc = mdb_txn_begin(db->db_env, NULL, 0, &txn);
	if (rc)
		return db_err(rc, "txn_begin");
	for (int t = 0; t < MDS_T_COUNT; t++) {
		rc = mdb_dbi_open(txn, db_table_names[t], MDB_CREATE,
				  &db->db_dbi[t]);
		if (rc) {
			mdb_txn_abort(txn);
			return db_err(rc, "dbi_open");
		}
	}
	rc = mdb_txn_commit(txn);
	if (rc)
		return db_err(rc, "txn_commit");
	return 0;
}

int mds_db_open(const char *dir, uint64_t map_size, struct mds_db **out)
{
	struct mds_db *db;
	int rc;

	if (!dir || !out)
		return -EINVAL;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	rc = mdb_env_create(&db->db_env);
	if (rc) {
		rc = db_err(rc, "env_create");
		goto out_free_db;
	}
	rc = mdb_env_set_maxdbs(db->db_env, MDS_T_COUNT);
	if (rc) {
		rc = db_err(rc, "env_set_maxdbs");
		goto out_close_env;
	}
	if (!map_size)
		map_size = DB_DEFAULT_MAP_SIZE;
	rc = mdb_env_set_mapsize(db->db_env, (size_t)map_size);
	if (rc) {
		rc = db_err(rc, "env_set_mapsize");
		goto out_close_env;
	}
	/* Default flags: every commit is fsynced (no MDB_NOSYNC). */
	rc = mdb_env_open(db->db_env, dir, 0, 0600);
	if (rc) {
		if (rc == ENOENT || rc == ENOTDIR) {
			rc = -rc;
			goto out_close_env;
		}
		rc = db_err(rc, "env_open");
		goto out_close_env;
	}
	rc = db_open_tables(db);
	if (rc)
		goto out_close_env;
	*out = db;
	return 0;

out_close_env:
	mdb_env_close(db->db_env);
out_free_db:
	free(db);
	return rc;
}

void mds_db_close(struct mds_db *db)
{
	if (!db)
		return;
	mdb_env_close(db->db_env);
	free(db);
}

/* The open batch of this thread (group commit), if any. */
static __thread MDB_txn *db_batch;
static __thread struct mds_db *db_batch_db;

int mds_db_batch_begin(struct mds_db *db)
{
	int rc;

	if (db_batch)
		return -EBUSY;
	rc = mdb_txn_begin(db->db_env, NULL, 0, &db_batch);
	if (rc) {
		db_batch = NULL;
		return db_err(rc, "batch_begin");
	}
	db_batch_db = db;
	return 0;
}

int mds_db_batch_end(struct mds_db *db)
{
	int rc;

	if (!db_batch || db_batch_db != db)
		return -EINVAL;
	rc = mdb_txn_commit(db_batch);
	db_batch = NULL;
	db_batch_db = NULL;
	return db_err(rc, "batch_commit");
}

static int db_txn_begin(struct mds_db *db, bool rdonly, bool flat, struct mds_txn **out)
{
	MDB_txn *parent = db_batch_db == db ? db_batch : NULL;
	struct mds_txn *txn;
	int rc;

	txn = malloc(sizeof(*txn));
	if (!txn)
		return -ENOMEM;
	txn->tx_db = db;
	txn->tx_rdonly = rdonly;
	/* A read-only transaction in a batch reads the batch's own: a nested
	 * one would allocate LMDB's dirty lists (megabytes) only to be
	 * thrown away, on every lookup of the writer thread. */
	txn->tx_borrowed = (rdonly || flat) && parent;
	if (txn->tx_borrowed) {
		txn->tx_txn = parent;
		*out = txn;
		return 0;
	}
	rc = mdb_txn_begin(db->db_env, parent, rdonly ? MDB_RDONLY : 0, &txn->tx_txn);
	if (rc) {
		free(txn);
		return db_err(rc, "txn_begin");
	}
	*out = txn;
	return 0;
}

int mds_db_txn_begin(struct mds_db *db, bool rdonly, struct mds_txn **out)
{
	return db_txn_begin(db, rdonly, false, out);
}

int mds_db_txn_begin_flat(struct mds_db *db, struct mds_txn **out)
{
	return db_txn_begin(db, false, true, out);
}

int mds_db_txn_commit(struct mds_txn *txn)
{
	int rc = txn->tx_borrowed ? 0 : mdb_txn_commit(txn->tx_txn);

	free(txn);
	return db_err(rc, "txn_commit");
}

void mds_db_txn_abort(struct mds_txn *txn)
{
	if (!txn)
		return;
	if (!txn->tx_borrowed)
		mdb_txn_abort(txn->tx_txn);
	free(txn);
}

int mds_db_get(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen, const void **val, size_t *vlen)
{
	MDB_val k = { .mv_size = klen, .mv_data = (void *)key };
	MDB_val v;
	int rc;

	if (!db_table_ok(t) || klen == 0)
		return -EINVAL;
	rc = mdb_get(txn->tx_txn, txn->tx_db->db_dbi[t], &k, &v);
	if (rc)
		return db_err(rc, "get");
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

int mds_db_put(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen, const void *val, size_t vlen, bool noover)
{
	MDB_val k = { .mv_size = klen, .mv_data = (void *)key };
	MDB_val v = { .mv_size = vlen, .mv_data = (void *)val };
	int rc;

	if (!db_table_ok(t) || klen == 0)
		return -EINVAL;
	if (txn->tx_rdonly)
		return -EACCES;	/* in a batch too, where LMDB would not see it */
	rc = mdb_put(txn->tx_txn, txn->tx_db->db_dbi[t], &k, &v,
		     noover ? MDB_NOOVERWRITE : 0);
	if (rc == MDB_BAD_VALSIZE)
		return -EINVAL;
	return db_err(rc, "put");
}

int mds_db_del(struct mds_txn *txn, enum mds_table t, const void *key,
	       size_t klen)
{
	MDB_val k = { .mv_size = klen, .mv_data = (void *)key };
	int rc;

	if (!db_table_ok(t) || klen == 0)
		return -EINVAL;
	if (txn->tx_rdonly)
		return -EACCES;
	rc = mdb_del(txn->tx_txn, txn->tx_db->db_dbi[t], &k, NULL);
	return db_err(rc, "del");
}

int mds_db_cursor_open(struct mds_txn *txn, enum mds_table t,
		       struct mds_cursor **out)
{
	struct mds_cursor *c;
	int rc;

	if (!db_table_ok(t))
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	rc = mdb_cursor_open(txn->tx_txn, txn->tx_db->db_dbi[t], &c->cu_cur);
	if (rc) {
		free(c);
		return db_err(rc, "cursor_open");
	}
	*out = c;
	return 0;
}

static int db_cursor_get(struct mds_cursor *c, MDB_val *k, MDB_cursor_op op,
			 const void **kp, size_t *kl, const void **vp,
			 size_t *vl)
{
	MDB_val v;
	int rc;

	rc = mdb_cursor_get(c->cu_cur, k, &v, op);
	if (rc)
		return db_err(rc, "cursor_get");
	if (kp)
		*kp = k->mv_data;
	if (kl)
		*kl = k->mv_size;
	if (vp)
		*vp = v.mv_data;
	if (vl)
		*vl = v.mv_size;
	return 0;
}

int mds_db_cursor_seek(struct mds_cursor *c, const void *key, size_t klen,
		       const void **k, size_t *kl, const void **v, size_t *vl)
{
	MDB_val mk = { .mv_size = klen, .mv_data = (void *)key };

	/* An empty key means "from the first entry". */
	if (klen == 0)
		return db_cursor_get(c, &mk, MDB_FIRST, k, kl, v, vl);
	return db_cursor_get(c, &mk, MDB_SET_RANGE, k, kl, v, vl);
}

int mds_db_cursor_next(struct mds_cursor *c, const void **k, size_t *kl,
		       const void **v, size_t *vl)
{
	MDB_val mk = { 0 };

	return db_cursor_get(c, &mk, MDB_NEXT, k, kl, v, vl);
}

void mds_db_cursor_close(struct mds_cursor *c)
{
	if (!c)
		return;
	mdb_cursor_close(c->cu_cur);
	free(c);
}

int mds_db_count(struct mds_txn *txn, enum mds_table t, uint64_t *entries)
{
	MDB_stat st;
	int rc;

	if (!db_table_ok(t))
		return -EINVAL;
	rc = mdb_stat(txn->tx_txn, txn->tx_db->db_dbi[t], &st);
	if (rc)
		return db_err(rc, "stat");
	*entries = st.ms_entries;
	return 0;
}

int mds_db_space(struct mds_db *db, uint64_t *map_size, uint64_t *used)
{
	MDB_envinfo info;
	MDB_stat st;
	int rc;

	rc = mdb_env_info(db->db_env, &info);
	if (rc)
		return db_err(rc, "env_info");
	rc = mdb_env_stat(db->db_env, &st);
	if (rc)
		return db_err(rc, "env_stat");
	*map_size = info.me_mapsize;
	/* Pages up to the last one used; pages on LMDB's free list are
	 * reusable but counted as used, so this errs on the full side. */
	*used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
	if (*used > *map_size)
		*used = *map_size;
	return 0;
}

int mds_db_free_bytes(struct mds_db *db, uint64_t (*enough)(uint64_t map_size),
		      uint64_t *map_size, uint64_t *free_bytes)
{
	struct mds_db_stats st;
	int rc;

	rc = mds_db_space(db, map_size, &st.ds_used);
	if (rc)
		return rc;
	*free_bytes = *map_size - st.ds_used;
	if (*free_bytes >= enough(*map_size))
		return 0;
	rc = mds_db_stats(db, &st);
	if (rc)
		return rc;
	*free_bytes += st.ds_free_pages * st.ds_page_size;
	if (*free_bytes > *map_size)
		*free_bytes = *map_size;
	return 0;
}

int mds_db_stats(struct mds_db *db, struct mds_db_stats *st)
{
	MDB_cursor *cur;
	MDB_stat es;
	MDB_txn *txn;
	MDB_val k, v;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = mds_db_space(db, &st->ds_map_size, &st->ds_used);
	if (rc)
		return rc;
	rc = mdb_env_stat(db->db_env, &es);
	if (rc)
		return db_err(rc, "env_stat");
	st->ds_page_size = es.ms_psize;
	rc = mdb_txn_begin(db->db_env, NULL, MDB_RDONLY, &txn);
	if (rc)
		return db_err(rc, "txn_begin");
	/* The free list is database 0 (LMDB's FREE_DBI): each record holds
	 * the number of pages it frees, then their numbers; mdb_stat -f
	 * counts them so too. */
	rc = mdb_cursor_open(txn, 0, &cur);
	if (rc)
		goto out_abort;
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		size_t n;

		if (v.mv_size < sizeof(n))
			continue;
		memcpy(&n, v.mv_data, sizeof(n));
		st->ds_free_pages += n;
	}
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		rc = 0;
out_abort:
	mdb_txn_abort(txn);
	return rc ? db_err(rc, "free list") : 0;
}
