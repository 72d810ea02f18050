#!/usr/bin/env python3
"""Runs a command on a new pseudo-terminal (its controlling terminal),
waits for a prompt, then acts as a user at it would, and reports what the
terminal looks like afterwards.

Usage: pty-prompt.py PROMPT ACTION... -- COMMAND...
PROMPT is text the command prints when it asks; each ACTION is one of
  key:TEXT     type TEXT (Python escapes: key:\\x03 is Ctrl-C)
  signal:NAME  send the signal (TERM, HUP ...) to the command
  prompt       wait for PROMPT again
Prints "echo at the prompt: on|off" for the first prompt, "status: exit N"
or "status: signal N", and the terminal's `stty -a` after the command
ended. Every wait is bounded (60 seconds); a command still running then
is killed and reported as "status: timeout".
"""
import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time

BOUND = 60


def main():
    prompt = sys.argv[1].encode()
    split = sys.argv.index('--')
    actions, command = sys.argv[2:split], sys.argv[split + 1:]
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.execvp(command[0], command)
    seen = bytearray()

    def wait_prompt(count):
        deadline = time.monotonic() + BOUND
        while seen.count(prompt) < count and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    seen.extend(os.read(master, 4096))
                except OSError:
                    return False
        return seen.count(prompt) >= count

    prompts = 1
    if not wait_prompt(prompts):
        print('prompt: not seen')
    else:
        lflag = termios.tcgetattr(slave)[3]
        print('echo at the prompt: ' + ('on' if lflag & termios.ECHO else 'off'))
    for action in actions:
        if action.startswith('key:'):
            text = action[4:].encode().decode('unicode_escape').encode('latin-1')
            os.write(master, text)
        elif action.startswith('signal:'):
            os.kill(pid, getattr(signal, 'SIG' + action[7:]))
        elif action == 'prompt':
            prompts += 1
            print('prompt again: ' + ('seen' if wait_prompt(prompts) else 'not seen'))
    deadline = time.monotonic() + BOUND
    status = None
    while status is None and time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            status = None
            # Keep the terminal's output flowing.
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    seen.extend(os.read(master, 4096))
                except OSError:
                    pass
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print('status: timeout')
    elif os.WIFSIGNALED(status):
        print('status: signal %d' % os.WTERMSIG(status))
    else:
        print('status: exit %d' % os.WEXITSTATUS(status))
    stty = subprocess.run(['stty', '-a'], stdin=slave, capture_output=True, text=True,
                          timeout=BOUND)
    print('stty: ' + ' '.join(stty.stdout.split()))
    print('output: ' + seen.decode(errors='replace').replace('\r', '').replace('\n', '|'))


main()
