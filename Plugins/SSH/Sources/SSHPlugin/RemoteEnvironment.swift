import CLibSSH2
import TermhostSDK

/// ssh_config's SendEnv and SetEnv: variables handed to the server ("env" requests, RFC 4254
/// 6.4) before the shell or command starts, for `termhost ssh` and `termhost exec`. The
/// server's AcceptEnv decides what it takes; a variable it refuses is left out without a word,
/// as OpenSSH's ssh leaves it (sshd only logs it), and the session goes on.
///
/// SendEnv names the user's variables by pattern (`LANG`, `LC_*`); `-PATTERN` takes back the
/// patterns before it that it matches, as in ssh_config. The user's variables are the
/// environment of the user behind the command (in the daemon, the client's: termhost.
/// environment/1), never the daemon's. SetEnv gives a value outright and wins over a SendEnv
/// variable of the same name. The saved host's lists come first, the command line's `-o` after
/// them; a `-o SetEnv` replaces the host's entry of that name.
struct RemoteEnvironment: Equatable {
    var sendEnv: [String] = []
    var setEnv: [String] = []

    /// The host's lists, then the command line's.
    init(host: Destination, commandLine: RemoteEnvironment = RemoteEnvironment()) {
        sendEnv = (host.sendEnv ?? []) + commandLine.sendEnv
        // The first value of a name wins, as ssh keeps it: the command line's before the host's.
        let first = HostRules.firstOfEachName(commandLine.setEnv + (host.setEnv ?? []))
        let fromLine = Set(commandLine.setEnv.map(HostRules.setEnvName))
        setEnv = (host.setEnv ?? []).filter { !fromLine.contains(HostRules.setEnvName($0)) } + first.filter { fromLine.contains(HostRules.setEnvName($0)) }
    }

    init(sendEnv: [String] = [], setEnv: [String] = []) {
        self.sendEnv = sendEnv
        self.setEnv = setEnv
    }

    var isEmpty: Bool { sendEnv.isEmpty && setEnv.isEmpty }

    /// The patterns left once each `-PATTERN` has taken back the ones before it that it
    /// matches (the same rule `hosts import` applies to ssh_config's lines).
    var patterns: [String] { SSHConfigParser.addSendEnv(sendEnv, to: []) }

    /// The name-value pairs to send, given the user's variable names and a way to read them:
    /// the SendEnv ones in name order, then SetEnv's in their order.
    func variables(names: [String], value: (String) -> String?) -> [(name: String, value: String)] {
        let setNames = Set(setEnv.map(HostRules.setEnvName))
        let patterns = self.patterns
        var pairs: [(name: String, value: String)] = []
        for name in names.sorted() where !setNames.contains(name) && patterns.contains(where: { SSHConfigParser.glob(Array($0.utf8), Array(name.utf8)) }) {
            if let v = value(name) { pairs.append((name, v)) }
        }
        for entry in setEnv { pairs.append((HostRules.setEnvName(entry), String(entry.drop { $0 != "=" }.dropFirst()))) }
        return pairs
    }

    /// The pairs for the user behind `user`'s scene: read when the command starts, since a
    /// kept connection (ConnectionPool) was made for another command, and another scene.
    func variables(for user: ConnectionPrompts) -> [Variable] {
        guard !isEmpty else { return [] }
        let names = patterns.isEmpty ? [] : (user.host.variableNames(scene: user.scene) ?? [])
        return variables(names: names, value: user.variable).map { Variable(name: $0.name, value: $0.value) }
    }

    struct Variable: Equatable {
        let name: String
        let value: String
    }

    /// Sends `variables` on `channel` (a session channel, before its shell or command).
    /// Returns the names the server refused.
    @discardableResult
    static func send(_ variables: [Variable], on channel: OpaquePointer, connection: SSHConnection) throws(SSHError) -> [String] {
        var refused: [String] = []
        for (name, value) in variables.map({ ($0.name, $0.value) }) {
            let rc = libssh2_channel_setenv_ex(channel, name, UInt32(name.utf8.count), value, UInt32(value.utf8.count))
            if rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED { refused.append(name); continue }
            guard rc == 0 else { throw SSHError("ssh: cannot send the variable \(VisibleText.of(name)) to \(connection.shownAddress): \(connection.lastError())") }
        }
        return refused
    }
}
