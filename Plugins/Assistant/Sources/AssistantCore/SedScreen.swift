/// `sed` is read-only only as `sed -n` with print-only scripts: each command `[ADDR[,ADDR]]p`,
/// separated by `;`, where an address is a line number, `$` or `/REGEX/` (no `/` or backslash
/// inside). Every other sed command is refused without telling them apart, since `w`, `W`, `e`,
/// `r`, `s///w` and `s///e` write files or run commands; so are `-i` (edit in place) and `-f`
/// (a script this classifier cannot read).
enum SedScreen {
    static func unprovenPart(_ args: ArraySlice<ShellWord>) -> String? {
        var quiet = false
        var scripts: [String] = []
        var files = 0
        var endOfOptions = false
        var i = args.startIndex
        while i < args.endIndex {
            let word = args[i]
            let text = word.text
            i += 1
            if word.hasGlob { return CommandClassifier.globProblem(word, "sed") }
            // After `--` every word is an operand: the first is the script unless an -e before
            // `--` gave one (`sed -n -- 'w FILE' -e 1p` runs the script 'w FILE'; -e is a file).
            if endOfOptions || text == "-" || !text.hasPrefix("-") {
                if scripts.isEmpty && files == 0 && !sawExpression(args) { scripts.append(text) } else { files += 1 }
                continue
            }
            if text == "--" { endOfOptions = true; continue }
            if text.hasPrefix("--") {
                let name = CommandClassifier.optionName(text)
                switch name {
                case "--quiet", "--silent": quiet = true
                case "--regexp-extended", "--separate", "--unbuffered", "--null-data", "--posix", "--sandbox", "--debug":
                    break
                case "--expression":
                    if let eq = text.firstIndex(of: "=") { scripts.append(String(text[text.index(after: eq)...])) }
                    else if i < args.endIndex { scripts.append(args[i].text); i += 1 }
                    else { return "'sed --expression' without a script" }
                case _ where "--in-place".hasPrefix(name):
                    return "'sed --in-place' edits files"
                default:
                    return "'sed \(name)' is not a proven read-only option"
                }
                continue
            }
            var letters = text.dropFirst()
            while let letter = letters.popFirst() {
                switch letter {
                case "n": quiet = true
                case "E", "r", "s", "u", "z": break
                case "e":
                    if !letters.isEmpty { scripts.append(String(letters)) }
                    else if i < args.endIndex { scripts.append(args[i].text); i += 1 }
                    else { return "'sed -e' without a script" }
                    letters = ""
                case "i": return "'sed -i' edits files"
                case "f": return "'sed -f' reads its script from a file, which is not proven"
                default: return "'sed -\(letter)' is not a proven read-only option"
                }
            }
        }
        guard quiet else { return "'sed' without -n is not proven read-only" }
        guard !scripts.isEmpty else { return "'sed' without a script" }
        for script in scripts where !isPrintOnly(script) {
            return "the sed script \(CommandWrappers.quoted(script)) is not print-only"
        }
        return nil
    }

    /// With `-e` (before any `--`), every operand is a file; without, the first operand is the script.
    static func sawExpression(_ args: ArraySlice<ShellWord>) -> Bool {
        args.prefix { $0.text != "--" }.contains { word in
            let text = word.text
            if text.hasPrefix("--") { return text.hasPrefix("--expression") }
            return text.hasPrefix("-") && text.dropFirst().contains("e")
        }
    }

    static func isPrintOnly(_ script: String) -> Bool {
        let commands = script.split(separator: ";", omittingEmptySubsequences: false)
        return commands.allSatisfy { command in
            var rest = command
            while rest.first == " " { rest = rest.dropFirst() }
            while rest.last == " " { rest = rest.dropLast() }
            guard rest.last == "p" else { return false }
            rest = rest.dropLast()
            if rest.isEmpty { return true }
            let addresses = rest.split(separator: ",", omittingEmptySubsequences: false)
            return addresses.count <= 2 && addresses.allSatisfy(isAddress)
        }
    }

    static func isAddress(_ text: Substring) -> Bool {
        if text == "$" { return true }
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) { return true }
        guard text.count >= 2, text.first == "/", text.last == "/" else { return false }
        return !text.dropFirst().dropLast().contains { $0 == "/" || $0 == "\\" || $0 == "," || $0 == ";" }
    }
}
