/* SPDX-License-Identifier: MIT */
/*
 * The client's counters as a table (nacre_counters()): each with its
 * Prometheus name and meaning, in the order docs/metrics.md lists them.
 */
#include "config.h"

#include "libclient/cl_int.h"

struct cl_stat_def {
	const char *sd_name;
	const char *sd_help;
	int sd_kind;
	int sd_ctr;                     /* enum cl_ctr, or -1..-3: readahead */
};

#define RA_FETCHED (-1)
#define RA_SERVED (-2)
#define RA_DROPPED (-3)

static const struct cl_stat_def cl_stat_defs[] = {
	{ "nacre_client_reads_total", "Reads (nacre_pread) that returned data.",
	  NACRE_CTR_COUNTER, CL_CTR_READS },
	{ "nacre_client_read_bytes_total", "Bytes returned by reads.",
	  NACRE_CTR_COUNTER, CL_CTR_READ_BYTES },
	{ "nacre_client_writes_total", "Writes (nacre_pwrite) that stored data.",
	  NACRE_CTR_COUNTER, CL_CTR_WRITES },
	{ "nacre_client_write_bytes_total", "Bytes accepted by writes.",
	  NACRE_CTR_COUNTER, CL_CTR_WRITE_BYTES },
	{ "nacre_client_degraded_reads_total",
	  "Pieces of erasure-coded files read by decoding other chunks of their row "
	  "(shard stale, OST unreachable or chunk corrupt).",
	  NACRE_CTR_COUNTER, CL_CTR_DEGRADED_READS },
	{ "nacre_client_degraded_read_bytes_total", "Bytes read by decoding.",
	  NACRE_CTR_COUNTER, CL_CTR_DEGRADED_READ_BYTES },
	{ "nacre_client_checksum_errors_total",
	  "Chunk reads an OST refused because the stored checksum did not match.",
	  NACRE_CTR_COUNTER, CL_CTR_CHECKSUM_ERRORS },
	{ "nacre_client_shards_marked_stale_total",
	  "Shards this client marked stale at the MDS (a write could not reach them).",
	  NACRE_CTR_COUNTER, CL_CTR_SHARDS_MARKED_STALE },
	{ "nacre_client_rebuild_files_total", "Files whose shards a rebuild regenerated.",
	  NACRE_CTR_COUNTER, CL_CTR_REBUILD_FILES },
	{ "nacre_client_rebuild_rows_total", "Rows a rebuild finished.",
	  NACRE_CTR_COUNTER, CL_CTR_REBUILD_ROWS },
	{ "nacre_client_rebuild_rows_pending", "Rows still to do in rebuilds under way.",
	  NACRE_CTR_GAUGE, CL_CTR_REBUILD_ROWS_PENDING },
	{ "nacre_client_rebuild_chunks_total",
	  "Chunks regenerated from parity and written (rebuild and scrub).",
	  NACRE_CTR_COUNTER, CL_CTR_REBUILD_CHUNKS },
	{ "nacre_client_rebuild_shards_cleared_total",
	  "Stale marks a rebuild cleared after regenerating the shard.",
	  NACRE_CTR_COUNTER, CL_CTR_REBUILD_SHARDS_CLEARED },
	{ "nacre_client_scrub_files_total", "Files scrubbed.",
	  NACRE_CTR_COUNTER, CL_CTR_SCRUB_FILES },
	{ "nacre_client_scrub_bad_chunks_total", "Corrupt chunks scrubs found.",
	  NACRE_CTR_COUNTER, CL_CTR_SCRUB_BAD_CHUNKS },
	{ "nacre_client_readahead_fetched_bytes_total", "Bytes read ahead from the OSTs.",
	  NACRE_CTR_COUNTER, RA_FETCHED },
	{ "nacre_client_readahead_served_bytes_total",
	  "Bytes of reads served from what was read ahead.",
	  NACRE_CTR_COUNTER, RA_SERVED },
	{ "nacre_client_readahead_dropped_bytes_total",
	  "Bytes read ahead, then dropped unread.",
	  NACRE_CTR_COUNTER, RA_DROPPED },
};

#define CL_NSTATS ((int)(sizeof(cl_stat_defs) / sizeof(cl_stat_defs[0])))

static uint64_t cl_stat_value(struct nacre_fs *fs, int ctr)
{
	switch (ctr) {
	case RA_FETCHED:
		return atomic_load(&fs->fs_ra_fetched);
	case RA_SERVED:
		return atomic_load(&fs->fs_ra_served);
	case RA_DROPPED:
		return atomic_load(&fs->fs_ra_dropped);
	default:
		return atomic_load_explicit(&fs->fs_ctr[ctr], memory_order_relaxed);
	}
}

NACRE_API int nacre_counters(struct nacre_fs *fs, struct nacre_counter *out, int max)
{
	for (int i = 0; i < CL_NSTATS && i < max; i++) {
		out[i].name = cl_stat_defs[i].sd_name;
		out[i].help = cl_stat_defs[i].sd_help;
		out[i].kind = cl_stat_defs[i].sd_kind;
		out[i].value = cl_stat_value(fs, cl_stat_defs[i].sd_ctr);
	}
	return CL_NSTATS;
}
