import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TermhostSDK

/// `termhost plugins sign --key PRIVATE_KEY SET` and `termhost plugins verify SET
/// [--allowed-signers FILE]`: the same SSHSIG signatures as `ssh-keygen -Y sign|verify -n
/// termhost-plugin-set`, for distributors who prefer not to call ssh-keygen. verify runs the
/// loader's own check (PluginSetSignature) on the set, so what it accepts is what loads.
enum PluginSetSigningCommand {
    static let signUsage = "usage: termhost plugins sign --key PRIVATE_KEY PLUGIN_SET"
    static let verifyUsage = "usage: termhost plugins verify PLUGIN_SET [--allowed-signers FILE] [--revoked-signers FILE]"

    static let signSpec = CommandArguments("termhost plugins sign", usage: signUsage, options: [.value("--key")], maxArguments: 1)
    static let verifySpec = CommandArguments("termhost plugins verify", usage: verifyUsage,
                                             options: [.value("--allowed-signers"), .value("--revoked-signers")], maxArguments: 1)

    static func sign(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let parsed: ParsedArguments
        switch HostArguments.parse(args, signSpec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        guard let keyPath = parsed.value("--key"), let setPath = parsed.arguments.first else { Output.err(signUsage); return ExitCode.usage }
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
        let options = g.runtimeOptions()
        var policy = DeploymentPolicy()
        if FileManager.default.fileExists(atPath: options.paths.operatorPolicy) {
            do { policy = try DeploymentPolicy.load(from: options.paths.operatorPolicy) } catch {
                Output.err("termhost: \(error.description)")
                return ExitCode.failure
            }
        }
        var files = policy.signerFiles(policyPath: options.paths.operatorPolicy)
        let parsed: ParsedArguments
        switch HostArguments.parse(args, verifySpec) {
        case .success(let p): parsed = p
        case .failure(let finished): return finished.status
        }
        if let allowed = parsed.value("--allowed-signers") { files.allowed = allowed }
        if let revoked = parsed.value("--revoked-signers") { files.revoked = revoked }
        guard let setPath = parsed.arguments.first else { Output.err(verifyUsage); return ExitCode.usage }
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
