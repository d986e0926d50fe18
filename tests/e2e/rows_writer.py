"""Writes 200 records of 1000 bytes at interleaved, unaligned offsets of an
existing file: writer A the even slots, writer B the odd ones, so that two
clients writing at once share every row.

usage: rows_writer.py PATH A|B|expect

With "expect", applies both writers' records to PATH: the bytes the file
must hold once A and B are done.
"""
import os
import random
import sys


def records(who):
    for i in range(200):
        slot = 2 * i if who == "A" else 2 * i + 1
        seed = (1 if who == "A" else 2) * 100000 + i
        yield 1000 * slot + 37, random.Random(seed).randbytes(1000)


def main():
    path, who = sys.argv[1], sys.argv[2]
    fd = os.open(path, os.O_WRONLY)
    for w in (["A", "B"] if who == "expect" else [who]):
        for off, rec in records(w):
            if os.pwrite(fd, rec, off) != len(rec):
                sys.exit("short write at %d" % off)
    os.fsync(fd)
    os.close(fd)


if __name__ == "__main__":
    main()
