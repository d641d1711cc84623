import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostRuntime

/// `termhost plugins sign --key PRIVATE_KEY SET` and `termhost plugins verify SET
/// [--allowed-signers FILE]`: the same SSHSIG signatures as `ssh-keygen -Y sign|verify -n
/// termhost-plugin-set`, for distributors who prefer not to call ssh-keygen. verify runs the
/// loader's own check (PluginSetSignature) on the set, so what it accepts is what loads.
enum PluginSetSigningCommand {
    static let signUsage = "usage: termhost plugins sign --key PRIVATE_KEY PLUGIN_SET"
    static let verifyUsage = "usage: termhost plugins verify PLUGIN_SET [--allowed-signers FILE] [--revoked-signers FILE]"

    static func sign(_ args: [String], _ g: GlobalOptions) -> Int32 {
        guard args.count == 3, let k = args.firstIndex(of: "--key"), k + 1 < args.count else { Output.err(signUsage); return ExitCode.usage }
        let keyPath = args[k + 1]
        let setPath = args.enumerated().first { $0.offset != k && $0.offset != k + 1 }!.element
        do {
            let key = try OpenSSHPrivateKey(armored: String(decoding: BoundedFile.read(keyPath, cap: OpenSSHPrivateKey.maxArmoredBytes), as: UTF8.self))
            let set = try BoundedFile.read(setPath, cap: BoundedFile.pluginSetCap)
            _ = try PluginSet.decode(set, file: setPath)   // sign only what the loader would read
            let signature = try SSHSignatureCrypto.sign([UInt8](set), with: key, namespace: SSHSignatureCrypto.pluginSetNamespace)
            let sigPath = setPath + ".sig"
            try Data(signature.armored.utf8).write(to: URL(fileURLWithPath: sigPath), options: .atomic)
            Output.err("Signed plugin set \(setPath) with \(key.publicKey.displayType) key \(SSHSignatureCrypto.fingerprint(key.publicKey)); wrote \(sigPath)")
            return ExitCode.success
        } catch let error as SSHFormatError {
            Output.err("termhost: cannot sign with \(keyPath): \(error.detail)")
        } catch let error as RegistryError {
            Output.err("termhost: \(error.description)")
        } catch {
            Output.err("termhost: cannot write \(setPath).sig: \(error.localizedDescription)")
        }
        return ExitCode.failure
    }

    static func verify(_ args: [String], _ g: GlobalOptions) -> Int32 {
        var setPath: String?
        let options = g.runtimeOptions()
        var policy = DeploymentPolicy()
        if FileManager.default.fileExists(atPath: options.paths.operatorPolicy) {
            do { policy = try DeploymentPolicy.load(from: options.paths.operatorPolicy) } catch {
                Output.err("termhost: \(error.description)")
                return ExitCode.failure
            }
        }
        var files = policy.signerFiles(policyPath: options.paths.operatorPolicy)
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--allowed-signers" where i + 1 < args.count: files.allowed = args[i + 1]; i += 2
            case "--revoked-signers" where i + 1 < args.count: files.revoked = args[i + 1]; i += 2
            case let a where !a.hasPrefix("-") && setPath == nil: setPath = a; i += 1
            default: Output.err(verifyUsage); return ExitCode.usage
            }
        }
        guard let setPath else { Output.err(verifyUsage); return ExitCode.usage }
        // Verifying is asking for a signature: an unsigned set fails here whatever the policy says.
        let trust = PluginSetTrust(required: true, allowedSigners: files.allowed, revokedSigners: files.revoked,
                                   requirement: "plugins verify asks for a signature")
        do {
            let (set, signer) = try PluginCatalog.loadPluginSet(setPath, trust: trust)
            let s = signer!
            if g.json {
                struct Verified: Encodable { let set: String; let name: String; let version: String; let signer: PluginSetSigner }
                Output.json(Verified(set: setPath, name: set.name, version: set.version, signer: s))
            } else {
                Output.out("Good \"\(SSHSignatureCrypto.pluginSetNamespace)\" signature of \(set.name) \(set.version) (\(setPath)) for \(s.principals ?? "?") with \(s.keyType) key \(s.fingerprint)")
            }
            return ExitCode.success
        } catch {
            Output.err("termhost: \(error.description)")
            return ExitCode.failure
        }
    }
}
