"""An asyncssh server (Debian's python3-asyncssh) for the exit status tests: a server that is
not OpenSSH and ends its channels in another order.

Usage: asyncssh_server.py AUTHORIZED_KEYS
Listens on 127.0.0.1, a port the kernel picks on a socket it keeps bound, and prints one line:
"PORT HOST_PUBLIC_KEY". Any user whose key is in AUTHORIZED_KEYS may log in.

What a session does, by its command:
  eof-then-exit N    prints "out", sends EOF, and sends exit status N 0.3 s later, then closes
                     (asyncssh's own order when a command closes its output before it exits)
  no-status          prints "out", sends EOF, and closes without any exit status
  (a shell)          reads one line "exit N" from stdin, then as eof-then-exit N
"""
import asyncio
import sys

import asyncssh


async def ended_later(process, status):
    process.stdout.write("out\n")
    process.stdout.write_eof()
    await asyncio.sleep(0.3)
    process.exit(status)


async def session(process):
    command = process.command
    if command is None:
        line = (await process.stdin.readline()).strip()
        await ended_later(process, int(line.split()[1]) if line.startswith("exit ") else 0)
    elif command.startswith("eof-then-exit "):
        await ended_later(process, int(command.split()[1]))
    elif command == "no-status":
        process.stdout.write("out\n")
        process.stdout.write_eof()
        process.close()
    else:
        process.stderr.write("unknown command\n")
        process.exit(127)


async def main():
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    server = await asyncssh.create_server(asyncssh.SSHServer, "127.0.0.1", 0, server_host_keys=[host_key],
                                          authorized_client_keys=sys.argv[1], process_factory=session)
    port = server.sockets[0].getsockname()[1]
    print(port, host_key.export_public_key().decode().strip(), flush=True)
    await server.wait_closed()


asyncio.run(main())
