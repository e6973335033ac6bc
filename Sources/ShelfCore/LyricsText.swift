import Foundation

/// One text of a track's lyrics: each language an ID3v2 tag holds, each value of a repeated
/// `LYRICS` field, or the `.lrc`/`.txt` file beside the audio. All are kept so that every one is
/// offered (getLyricsBySongId, the page's language select); the track's `lyrics` is the first.
public struct LyricsText: Sendable, Codable, Hashable {
    /// The language as tagged (ISO 639-2, "eng"); empty when the source names none.
    public var lang: String
    /// Where it came from: `embedded` (the file's tags) or `file` (beside the audio).
    public var source: String
    /// The lyrics, plain or LRC.
    public var text: String

    /// A text with its language and source.
    public init(lang: String, source: String, text: String) {
        self.lang = lang
        self.source = source
        self.text = text
    }
}
