#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""vmprof.py - sample the vCPUs of a test VM through QEMU's gdbstub.

perf cannot sample busy vCPUs under TCG, so this profiler stops the whole
VM a few hundred times a second over QEMU's gdb remote protocol, reads the
instruction pointer of every vCPU and lets it run again.  The result is a
flat profile per symbol: where the guest's CPUs spend their time.

Boot the VM with the stub and without KASLR, and have the guest print the
symbols of the modules you care about:

    SNAA_VM_QEMU_ARGS="-gdb tcp:127.0.0.1:1234" SNAA_VM_APPEND=nokaslr \\
        selftests/vm/run -- sh my-test.sh     # prints /proc/kallsyms lines
    bench/vmprof.py --delay 10 --seconds 5 --map /boot/System.map-K \\
        --map guest-output.txt

Samples taken while the VM runs cost it a stop each: figures measured in a
sampled run are lower than normal ones.
"""
import argparse
import bisect
import re
import socket
import sys
import time
from collections import Counter

SYM_RE = re.compile(r'^(?:KSYM )?([0-9a-f]{16}) ([tTwW]) (\S+)(?:\s+\[(\S+)\])?')


class Stub:
    """A minimal gdb remote protocol client (no-ack mode)."""

    def __init__(self, host, port, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, port), 1)
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit(f'vmprof: no gdbstub at {host}:{port} '
                             f'(boot the VM with SNAA_VM_QEMU_ARGS="-gdb tcp:{host}:{port}")')
                time.sleep(0.2)
        self.sock.settimeout(10)
        self.buf = b''
        self.acks = True
        self.cmd('QStartNoAckMode')
        self.acks = False

    def send(self, data):
        cs = sum(data.encode()) & 0xff
        self.sock.sendall(b'$%s#%02x' % (data.encode(), cs))

    def recv(self):
        while True:
            start = self.buf.find(b'$')
            end = self.buf.find(b'#', start)
            if start >= 0 and end >= 0 and len(self.buf) >= end + 3:
                pkt = self.buf[start + 1:end].decode()
                self.buf = self.buf[end + 3:]
                if self.acks:
                    self.sock.sendall(b'+')
                return pkt
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError('gdbstub closed the connection')
            self.buf += chunk

    def cmd(self, data):
        self.send(data)
        return self.recv()

    def stop(self):
        self.sock.sendall(b'\x03')
        while True:
            reply = self.recv()
            if reply[:1] in ('S', 'T'):
                return reply

    def resume(self):
        self.send('c')

    def threads(self):
        ids = []
        reply = self.cmd('qfThreadInfo')
        while reply.startswith('m'):
            ids += reply[1:].split(',')
            reply = self.cmd('qsThreadInfo')
        return ids

    def regs(self, tid):
        """rip and rsp of a vCPU."""
        # QEMU has no 'p' for x86-64 without target XML: take them from
        # the 'g' block (rax rbx rcx rdx rsi rdi rbp rsp r8..r15 rip).
        self.cmd('Hg' + tid)
        regs = self.cmd('g')
        return (int.from_bytes(bytes.fromhex(regs[256:272]), 'little'),
                int.from_bytes(bytes.fromhex(regs[112:128]), 'little'))

    def words(self, addr, n):
        """n 64-bit words of guest memory at addr (the current vCPU's view)."""
        reply = self.cmd(f'm{addr:x},{8 * n:x}')
        if len(reply) != 16 * n or reply.startswith('E'):
            return []
        return [int.from_bytes(bytes.fromhex(reply[i:i + 16]), 'little')
                for i in range(0, len(reply), 16)]


KERNEL_BASE = 0xffff800000000000


def symbolize(addrs, names, pc):
    i = bisect.bisect_right(addrs, pc) - 1
    return names[i] if i >= 0 else f'{pc:#x}'


def load_symbols(paths):
    syms = {}
    for path in paths:
        with open(path, errors='replace') as f:
            for line in f:
                m = SYM_RE.match(line)
                if not m:
                    continue
                name = m.group(3) + (f' [{m.group(4)}]' if m.group(4) else '')
                syms[int(m.group(1), 16)] = name
    addrs = sorted(syms)
    return addrs, [syms[a] for a in addrs]


def main():
    ap = argparse.ArgumentParser(
        description='Flat profile of a TCG test VM through its gdbstub.',
        epilog='See the module docstring (head of this file) for the VM set-up.')
    ap.add_argument('--host', default='127.0.0.1')
    ap.add_argument('--port', type=int, default=1234)
    ap.add_argument('--delay', type=float, default=0,
                    help='seconds to wait after connecting before sampling')
    ap.add_argument('--seconds', type=float, default=5, help='how long to sample')
    ap.add_argument('--hz', type=float, default=200, help='samples per second')
    ap.add_argument('--map', action='append', default=[],
                    help='System.map or kallsyms lines (repeatable)')
    ap.add_argument('--top', type=int, default=40, help='symbols to print')
    ap.add_argument('--callers', type=int, default=0, metavar='N',
                    help='also read N stack words per kernel sample and show, '
                         'for each symbol, the first code addresses found there '
                         '(exact for leaf functions, a hint for others)')
    ap.add_argument('--pcs', metavar='FILE',
                    help='also write the PC of every kernel sample to FILE, '
                         'one hex address per line (for addr2line on the '
                         'module: line-level costs)')
    args = ap.parse_args()

    stub = Stub(args.host, args.port, 60)
    stub.resume()
    time.sleep(args.delay)
    addrs, names = load_symbols(args.map)
    if not addrs:
        sys.exit('vmprof: no symbols: give --map files with kallsyms lines')
    per_cpu = {}
    callers = {}
    total = Counter()
    text_lo = min((a for a in addrs if a >= KERNEL_BASE), default=KERNEL_BASE)
    text_hi = max(addrs, default=0) + 0x10000
    end = time.monotonic() + args.seconds
    n = 0
    pcs = open(args.pcs, 'w') if args.pcs else None
    tids = None
    while time.monotonic() < end:
        time.sleep(1 / args.hz)
        try:
            stub.stop()
            # The vCPUs do not change: ask for them once, while stopped.
            if tids is None:
                tids = stub.threads()
            for tid in tids:
                pc, sp = stub.regs(tid)
                if pc < KERNEL_BASE:
                    name = '[user]'
                else:
                    name = symbolize(addrs, names, pc)
                    if pcs:
                        pcs.write(f'{pc:x}\n')
                    if args.callers and sp >= KERNEL_BASE:
                        chain = [symbolize(addrs, names, w)
                                 for w in stub.words(sp, args.callers)
                                 if text_lo <= w < text_hi][:3]
                        callers.setdefault(name, Counter())[' < '.join(chain)] += 1
                total[name] += 1
                per_cpu.setdefault(tid, Counter())[name] += 1
            stub.resume()
        except (EOFError, OSError):
            break
        n += 1
    stub.sock.close()
    if pcs:
        pcs.close()
    print(f'# {n} stops, {sum(total.values())} samples, vCPUs {sorted(per_cpu)}')
    all_n = sum(total.values()) or 1
    for name, c in total.most_common(args.top):
        cols = ' '.join(f'{per_cpu[t][name]:5d}' for t in sorted(per_cpu))
        print(f'{100 * c / all_n:6.2f}% {c:6d} {cols}  {name}')
        for chain, k in callers.get(name, Counter()).most_common(3):
            print(f'{"":22}{k:5d} < {chain}')


if __name__ == '__main__':
    main()
