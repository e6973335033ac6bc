import Foundation

/// The one reader of the text files that live beside music: `.cue` sheets, `.m3u`/`.m3u8`
/// playlists and `.lrc`/`.txt` lyrics. Players and rippers on Windows wrote them in whatever
/// the machine used, so each is detected the same way: UTF-8 with or without a byte-order mark,
/// UTF-16 with one, Shift-JIS (CP932) when the bytes hold its double-byte characters, else
/// Windows-1252 (`TextEncoding.detect`).
enum LegacyText {
    /// The text of `data` without any byte-order mark, and the encoding it was in; nil when it is
    /// in none of them: NUL bytes outside UTF-16 (a binary file), or UTF-16 that does not decode.
    static func decode(_ data: Data) -> (text: String, encoding: TextEncoding)? {
        let encoding = TextEncoding.detect(data)
        if encoding != .utf16LE, encoding != .utf16BE, data.contains(0) { return nil }
        guard let text = encoding.decode(data) else { return nil }
        return (text, encoding)
    }

    /// Why `decode` refused a file, for the warning that names it.
    static let refusal = "is not text in UTF-8, UTF-16 (with a byte-order mark), Shift-JIS or Windows-1252"
}
