import BatchedCTR
import CCrypto
import Foundation
import Testing

/// The SSH plugin's bulk AES-CTR (Plugins/SSH/Sources/BatchedCTR) against OpenSSL's own: the
/// same bytes for any split of the data, and the same running state (IV, num, re-keying,
/// copies) that OpenSSL's users read back; libssh2's way of asking for AES-CTR gets it inside
/// termhost_batched_ctr_enter/leave, and no other OpenSSL user in the process gets it.
@Suite struct BatchedCTRTests {
    /// Once per test process, as the SSH plugin does at init.
    static let enabled: Bool = {
        var why = [UInt8](repeating: 0, count: 256)
        return why.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { termhost_batched_ctr_enable($0, b.count) }
        } == 1
    }()

    /// Runs body with the SSH sessions' library context as this thread's default, as the SSH
    /// plugin runs libssh2.
    static func inSSHContext<T>(_ body: () -> T) -> T {
        let previous = termhost_batched_ctr_enter()
        defer { termhost_batched_ctr_leave(previous) }
        return body()
    }

    /// One EVP context of AES-CTR from the given provider query, fetched in the SSH sessions'
    /// library context or in the process's default one.
    final class Stream {
        let ctx: OpaquePointer
        init(bits: Int, query: String?, key: [UInt8], iv: [UInt8], ssh: Bool) {
            let fetch = { EVP_CIPHER_fetch(nil, "AES-\(bits)-CTR", query)! }
            let cipher = ssh ? BatchedCTRTests.inSSHContext(fetch) : fetch()
            ctx = EVP_CIPHER_CTX_new()!
            precondition(EVP_EncryptInit_ex(ctx, cipher, nil, key, iv) == 1)
            EVP_CIPHER_free(cipher)
        }
        init(copying other: Stream) {
            ctx = EVP_CIPHER_CTX_new()!
            precondition(EVP_CIPHER_CTX_copy(ctx, other.ctx) == 1)
        }
        deinit { EVP_CIPHER_CTX_free(ctx) }

        var provider: [UInt8] { BatchedCTRTests.name(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(EVP_CIPHER_CTX_get0_cipher(ctx)))) }

        func crypt(_ data: ArraySlice<UInt8>) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: data.count + 16)
            var length: Int32 = 0
            let ok = data.withUnsafeBufferPointer { EVP_EncryptUpdate(ctx, &out, &length, $0.baseAddress, Int32($0.count)) }
            precondition(ok == 1)
            return Array(out[..<Int(length)])
        }

        /// The running IV and the bytes used of the current block, as OpenSSL reports them.
        var state: [UInt8] {
            var iv = [UInt8](repeating: 0, count: 16)
            precondition(EVP_CIPHER_CTX_get_updated_iv(ctx, &iv, 16) == 1)
            return iv + [UInt8(EVP_CIPHER_CTX_get_num(ctx))]
        }

        func reinit(key: [UInt8]?, iv: [UInt8]?) { precondition(EVP_EncryptInit_ex(ctx, nil, nil, key, iv) == 1) }
    }

    static func name(_ p: UnsafePointer<CChar>?) -> [UInt8] {
        guard let p else { return [] }
        var bytes: [UInt8] = []
        var at = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
        while at.pointee != 0 { bytes.append(at.pointee); at += 1 }
        return bytes
    }

    /// Equal, without printing kilobytes when not.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }

    static func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255) } }

    /// IVs that carry across the low 32 and 64 bits and wrap all 128.
    static let ivs: [[UInt8]] = [random(16), random(8) + [UInt8](repeating: 0xff, count: 8),
                                 random(12) + [0xff, 0xff, 0xff, 0xf0], [UInt8](repeating: 0xff, count: 16)]
    static let splits = [0, 1, 3, 15, 16, 17, 100, 4095, 4096, 4097, 8191, 16]

    @Test(arguments: [128, 192, 256])
    func anySplitGivesOpenSSLsBytesAndState(bits: Int) {
        #expect(Self.enabled)
        let data = Self.random(60_000)
        for iv in Self.ivs {
            let key = Self.random(bits / 8)
            let ours = Stream(bits: bits, query: nil, key: key, iv: iv, ssh: true)
            let theirs = Stream(bits: bits, query: "provider=default", key: key, iv: iv, ssh: false)
            #expect(ours.provider == Array("termhost".utf8) && theirs.provider == Array("default".utf8))
            var at = 0, turn = 0
            while at < data.count {
                let n = min(Self.splits[turn % Self.splits.count], data.count - at)
                turn += 1
                #expect(Self.same(ours.crypt(data[at..<at + n]), theirs.crypt(data[at..<at + n])), "AES-\(bits) at \(at)+\(n)")
                #expect(ours.state == theirs.state, "AES-\(bits) state at \(at + n)")
                at += n
            }
        }
    }

    @Test func reKeyingCopyingAndANewIVBehaveAsOpenSSLs() {
        #expect(Self.enabled)
        let data = Self.random(20_000)
        let key = Self.random(16), iv = Self.random(16)
        let ours = Stream(bits: 128, query: nil, key: key, iv: iv, ssh: true)
        let theirs = Stream(bits: 128, query: "provider=default", key: key, iv: iv, ssh: false)
        // Mid-block (1,000 = 62 blocks + 8 bytes), then a new key alone: the counter goes on.
        #expect(Self.same(ours.crypt(data[0..<1000]), theirs.crypt(data[0..<1000])))
        let other = Self.random(16)
        ours.reinit(key: other, iv: nil)
        theirs.reinit(key: other, iv: nil)
        #expect(Self.same(ours.crypt(data[1000..<6000]), theirs.crypt(data[1000..<6000])))
        #expect(ours.state == theirs.state)
        // A copy continues on its own, as the original does.
        let ourCopy = Stream(copying: ours), theirCopy = Stream(copying: theirs)
        #expect(Self.same(ours.crypt(data[6000..<9000]), theirs.crypt(data[6000..<9000])))
        #expect(Self.same(ourCopy.crypt(data[6000..<7500]), theirCopy.crypt(data[6000..<7500])))
        #expect(ourCopy.state == theirCopy.state && ours.state == theirs.state)
        // A new IV alone restarts the block.
        let fresh = Self.random(16)
        ours.reinit(key: nil, iv: fresh)
        theirs.reinit(key: nil, iv: fresh)
        #expect(Self.same(ours.crypt(data[9000..<20000]), theirs.crypt(data[9000..<20000])))
        #expect(ours.state == theirs.state)
    }

    /// The provider's name of a cipher context's cipher.
    static func provider(_ ctx: OpaquePointer) -> [UInt8] {
        name(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(EVP_CIPHER_CTX_get0_cipher(ctx))))
    }

    /// libssh2 (1.10 and 1.11.1): EVP_CipherInit with EVP_aes_*_ctr(), then EVP_Cipher one
    /// 16-byte block at a time (its return value checked against -1).
    @Test func libssh2sWayOfAskingGetsItAndItsOutputIsOpenSSLs() {
        #expect(Self.enabled)
        for (bits, legacy) in [(128, EVP_aes_128_ctr()), (256, EVP_aes_256_ctr())] {
            let key = Self.random(bits / 8), iv = Self.random(16)
            let ctx = EVP_CIPHER_CTX_new()!
            defer { EVP_CIPHER_CTX_free(ctx) }
            #expect(Self.inSSHContext { EVP_CipherInit(ctx, legacy, key, iv, 1) } == 1)
            #expect(Self.provider(ctx) == Array("termhost".utf8))
            let data = Self.random(16 * 700)
            var out = [UInt8](repeating: 0, count: data.count)
            for block in stride(from: 0, to: data.count, by: 16) {
                var one = Array(data[block..<block + 16])
                let rc = EVP_Cipher(ctx, &one, one, 16)
                #expect(rc == 16)
                out.replaceSubrange(block..<block + 16, with: one)
            }
            let reference = Stream(bits: bits, query: "provider=default", key: key, iv: iv, ssh: false)
            #expect(Self.same(out, reference.crypt(data[...])))
        }
        // OpenSSL's random generator (a CTR-DRBG over AES-256-CTR) still works, in both.
        var bytes = [UInt8](repeating: 0, count: 64)
        #expect(RAND_bytes(&bytes, 64) == 1)
        #expect(Self.inSSHContext { RAND_bytes(&bytes, 64) } == 1)
    }

    /// Another OpenSSL user in the process, on this thread outside the brackets or on another
    /// thread while this one is inside them, gets OpenSSL's own AES-CTR, by name or the way
    /// libssh2 asks: the plugin changes no process-wide default.
    @Test func otherOpenSSLUsersInTheProcessAreUnaffected() {
        #expect(Self.enabled)
        let openssl = Array("default".utf8), ours = Array("termhost".utf8)
        #expect(Self.fetched() == openssl && Self.initialised() == openssl)
        // Inside: ours; meanwhile a thread of its own (another plugin's, say) gets OpenSSL's.
        let other = Self.inSSHContext { () -> [[UInt8]] in
            #expect(Self.fetched() == ours && Self.initialised() == ours)
            let result = OtherThread.run { [Self.fetched(), Self.initialised()] }
            #expect(Self.fetched() == ours)
            return result
        }
        #expect(other == [openssl, openssl])
        // Nested brackets, then out again: back to OpenSSL's.
        Self.inSSHContext {
            Self.inSSHContext { #expect(Self.fetched() == ours) }
            #expect(Self.initialised() == ours)
        }
        #expect(Self.fetched() == openssl && Self.initialised() == openssl)
    }

    /// The provider of AES-128-CTR fetched by name with no query, as most OpenSSL users do.
    static func fetched() -> [UInt8] {
        let cipher = EVP_CIPHER_fetch(nil, "AES-128-CTR", nil)!
        defer { EVP_CIPHER_free(cipher) }
        return name(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(cipher)))
    }

    /// The provider a context initialised with the legacy EVP_aes_128_ctr() gets.
    static func initialised() -> [UInt8] {
        let ctx = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(ctx) }
        precondition(EVP_CipherInit(ctx, EVP_aes_128_ctr(), random(16), random(16), 1) == 1)
        return provider(ctx)
    }
}

/// Runs a body on a thread of its own and waits for its result.
private final class OtherThread: @unchecked Sendable {
    private var value: [[UInt8]] = []
    private let done = DispatchSemaphore(value: 0)

    static func run(_ body: @escaping @Sendable () -> [[UInt8]]) -> [[UInt8]] {
        let box = OtherThread()
        Thread { box.value = body(); box.done.signal() }.start()
        box.done.wait()
        return box.value
    }
}
