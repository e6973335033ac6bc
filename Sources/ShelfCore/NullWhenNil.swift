/// Marks an optional property that JSON must show as `null` when it is nil instead of leaving the
/// key out (what synthesized `Codable` does), so that a script or client sees a document's whole
/// shape whatever it holds. Decoding accepts the key missing or `null` alike.
@propertyWrapper
public struct NullWhenNil<Value> {
    /// The optional value itself.
    public var wrappedValue: Value?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension NullWhenNil: Sendable where Value: Sendable {}
extension NullWhenNil: Equatable where Value: Equatable {}
extension NullWhenNil: Hashable where Value: Hashable {}

extension NullWhenNil: Encodable where Value: Encodable {
    /// The value, or `null`: a keyed container hands each property its own single-value slot.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension NullWhenNil: Decodable where Value: Decodable {
    /// The value, or nil for `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// Lets synthesized decoding take a missing key as nil, as it does for a plain optional
    /// (without this overload it would demand the key).
    public func decode<Value: Decodable>(_ type: NullWhenNil<Value>.Type, forKey key: Key) throws -> NullWhenNil<Value> {
        NullWhenNil(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}
