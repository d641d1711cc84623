"""An asyncssh server (Debian's python3-asyncssh) for the exit status tests: a server that is
not OpenSSH and ends its channels in another order.

Usage: asyncssh_server.py AUTHORIZED_KEYS [--forged-host-certificate]
Listens on 127.0.0.1, a port the kernel picks on a socket it keeps bound, and prints one line:
"PORT HOST_PUBLIC_KEY". Any user whose key is in AUTHORIZED_KEYS may log in.

--forged-host-certificate: the host also shows a certificate for 127.0.0.1 whose CA field names
a CA that never signed it (the signature is another CA's): a hostile server's forgery. A second
line "CA PUBLIC_KEY" gives the CA it claims.

What a session does, by its command:
  eof-then-exit N    prints "out", sends EOF, and sends exit status N 0.3 s later, then closes
                     (asyncssh's own order when a command closes its output before it exits)
  no-status          prints "out", sends EOF, and closes without any exit status
  (a shell)          reads one line "exit N" from stdin, then as eof-then-exit N
"""
import asyncio
import struct
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


def with_signature_key(certificate, ca_blob):
    """The certificate's bytes (PROTOCOL.certkeys, an Ed25519 key) with its signature key field
    replaced; every other byte, the signature included, kept."""
    def after(i):
        return i + 4 + struct.unpack(">I", certificate[i:i + 4])[0]
    i = after(after(after(0)))              # type, nonce, key
    i = after(i + 12)                       # serial, type; key ID
    i = after(after(after(after(i) + 16)))  # principals; validity; critical, extensions, reserved
    return certificate[:i] + struct.pack(">I", len(ca_blob)) + ca_blob + certificate[after(i):]


async def main():
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    keys = [host_key]
    claimed = None
    if "--forged-host-certificate" in sys.argv[2:]:
        signer = asyncssh.generate_private_key("ssh-ed25519")
        claimed = asyncssh.generate_private_key("ssh-ed25519")
        certificate = signer.generate_host_certificate(host_key, "forged", principals=["127.0.0.1"])
        certificate.public_data = with_signature_key(certificate.public_data, claimed.public_data)
        keys = [(host_key, certificate)]   # asyncssh offers the plain key beside it
    server = await asyncssh.create_server(asyncssh.SSHServer, "127.0.0.1", 0, server_host_keys=keys,
                                          authorized_client_keys=sys.argv[1], process_factory=session)
    port = server.sockets[0].getsockname()[1]
    print(port, host_key.export_public_key().decode().strip(), flush=True)
    if claimed:
        print("CA", claimed.export_public_key().decode().strip(), flush=True)
    await server.wait_closed()


asyncio.run(main())
