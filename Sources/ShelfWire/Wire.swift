import Foundation

/// The one encoder behind `shelf --json` and every `/api/` answer, so the two cannot drift:
/// camelCase keys as `Codable` writes them, keys sorted for stable output, ISO 8601 dates.
public enum Wire {
    /// A fresh encoder with Shelf's settings (JSONEncoder is not safe to share across threads).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// `value` as one JSON document: through its own `FastJSONEncodable` writer when it has one
    /// (the same bytes, many times faster), else through `encoder()`.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        if let fast = value as? any FastJSONEncodable, let data = fastEncode(fast) { return data }
        return try slowEncode(value)
    }

    /// `value` through JSONEncoder alone, as `encode` did before the fast writers (tests compare both).
    public static func slowEncode<T: Encodable>(_ value: T) throws -> Data { try encoder().encode(value) }

    /// `value` through its own writer; nil when it met something only JSONEncoder can report (a NaN).
    public static func fastEncode(_ value: some FastJSONEncodable) -> Data? {
        var writer = JSONWriter()
        value.writeJSON(to: &writer)
        return writer.needsFallback ? nil : Data(writer.bytes)
    }
}

/// A bad parameter value found while reading a request (a flag or a query parameter): the
/// message names the value and what was expected. The command line makes it a usage error, the
/// server a 400.
public struct WireInputError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the value.
    public let message: String
    /// An error with its message.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
