/// Padding for the columns of `ls -l`, `df` and the progress line.
extension String {
    /// Right-aligned in a column `width` characters wide: spaces before it, never cut.
    func rightAligned(_ width: Int) -> String { padded(to: width, with: " ") }

    /// A number's digits widened to `width` with leading zeros ("7" becomes "07"), never cut.
    func zeroPadded(_ width: Int) -> String { padded(to: width, with: "0") }

    private func padded(to width: Int, with pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
