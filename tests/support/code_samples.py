"""Small real-looking source files, one per language the code reader knows (tests/indexing/test_formats_code.py
checks every chunk of each: kind, lines, breadcrumb)."""

from __future__ import annotations

PYTHON = '''"""Rate limiting for the public API."""

import time
from dataclasses import dataclass

DEFAULT_RATE = 10


@dataclass
class Bucket:
    """A token bucket."""

    capacity: int
    tokens: float = 0.0

    def refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + now)

    # Spend one token if there is one.
    @property
    def empty(self) -> bool:
        return self.tokens < 1


def allow(bucket: Bucket) -> bool:
    """Whether a request may pass."""
    bucket.refill(time.monotonic())
    return not bucket.empty


if __name__ == "__main__":
    print(allow(Bucket(DEFAULT_RATE)))
'''

JAVASCRIPT = """import { readFile } from "node:fs/promises";

const RETRIES = 3;

/** Load the settings file. */
export async function loadSettings(path) {
  const raw = await readFile(path, "utf8");
  return JSON.parse(raw);
}

export const retry = async (fn) => {
  for (let i = 0; i < RETRIES; i++) {
    try { return await fn(); } catch (e) { if (i === RETRIES - 1) throw e; }
  }
};

class Cache {
  constructor() {
    this.entries = new Map();
  }

  get(key) {
    return this.entries.get(key);
  }
}

module.exports = { Cache };
"""

TYPESCRIPT = """import type { Request } from "./http";

// A user as the API returns it.
export interface User {
  id: string;
  name: string;
}

export type UserId = User["id"];

export enum Role {
  Admin,
  Reader,
}

export class UserStore {
  private users = new Map<UserId, User>();

  find(id: UserId): User | undefined {
    return this.users.get(id);
  }
}

export function handle(req: Request): string {
  return req.url;
}
"""

TSX = """import React from "react";

type Props = { label: string };

export const Badge = ({ label }: Props) => <span className="badge">{label}</span>;

export function Panel({ label }: Props) {
  return (
    <div>
      <Badge label={label} />
    </div>
  );
}
"""

GO = """// Package queue hands jobs to workers.
package queue

import (
	"context"
	"errors"
)

// ErrClosed is returned once the queue is closed.
var ErrClosed = errors.New("queue closed")

// Job is one unit of work.
type Job struct {
	ID      string
	Payload []byte
}

// Queue holds pending jobs.
type Queue struct {
	jobs chan Job
}

// Push adds a job unless the context is done.
func (q *Queue) Push(ctx context.Context, job Job) error {
	select {
	case q.jobs <- job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New makes a queue that holds size jobs.
func New(size int) *Queue {
	return &Queue{jobs: make(chan Job, size)}
}
"""

RUST = """use std::collections::HashMap;

/// A parsed configuration.
#[derive(Debug, Default)]
pub struct Config {
    values: HashMap<String, String>,
}

pub enum Source {
    File(String),
    Env,
}

impl Config {
    /// Look a key up.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.values.get(key)
    }

    pub fn set(&mut self, key: &str, value: &str) {
        self.values.insert(key.to_string(), value.to_string());
    }
}

pub trait Loader {
    fn load(&self) -> Config;
}

mod tests {
    fn parses() {}
}

pub fn parse(text: &str) -> Config {
    let _ = text;
    Config::default()
}
"""

JAVA = """package com.example.billing;

import java.util.List;

/** Sums invoices. */
public class InvoiceTotals {
    private final List<Long> amounts;

    public InvoiceTotals(List<Long> amounts) {
        this.amounts = amounts;
    }

    // Total in cents.
    @Override
    public long total() {
        return amounts.stream().mapToLong(Long::longValue).sum();
    }
}

interface Priced {
    long price();
}

enum Currency {
    EUR, USD;

    String symbol() {
        return this == EUR ? "€" : "$";
    }
}

record Line(String sku, long cents) {}
"""

C = """#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE 256

/* A growable buffer. */
struct buffer {
    char *data;
    size_t len;
};

typedef struct {
    int x;
    int y;
} point_t;

enum color { RED, GREEN };

static int counter = 0;

/* Append a byte, growing when full. */
int buffer_push(struct buffer *b, char c)
{
    b->data[b->len++] = c;
    return 0;
}

int main(void)
{
    printf("%d\\n", counter);
    return 0;
}
"""

CPP = """#include <string>
#include <vector>

namespace geo {

// A point on the plane.
class Point {
public:
    Point(double x, double y) : x_(x), y_(y) {}

    double norm() const {
        return x_ * x_ + y_ * y_;
    }

private:
    double x_, y_;
};

template <typename T>
T clamp(T v, T lo, T hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace geo

double area(const std::vector<geo::Point>& pts) {
    return pts.size();
}
"""

BASH = """#!/usr/bin/env bash
set -euo pipefail

LOG_DIR=/var/log/app

# Print a line to stderr.
log() {
  echo "$@" >&2
}

function rotate {
  mv "$LOG_DIR/app.log" "$LOG_DIR/app.log.1"
}

log "rotating"
rotate
"""
