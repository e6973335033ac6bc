import Foundation

/// The word lists the dataset generator draws from: several scripts, and the awkward cases
/// (accents, leading articles, kana readings, digits and symbols) that sorting must get right.
enum NamePools {
    static let adjectives = [
        "Silver", "Electric", "Velvet", "Midnight", "Crimson", "Hollow", "Golden", "Broken", "Quiet", "Wild",
        "Neon", "Paper", "Glass", "Lonely", "Burning", "Frozen", "Secret", "Endless", "Hidden", "Falling",
        "Distant", "Lucky", "Savage", "Gentle", "Wicked", "Rusty", "Northern", "Southern", "Blue", "Scarlet",
        "Empty", "Restless", "Sleeping", "Shining", "Dusty", "Little", "Wandering", "Bitter", "Sweet", "Strange",
    ]
    static let nouns = [
        "Wolf", "River", "Engine", "Garden", "Machine", "Sparrow", "Harbor", "Mirror", "Lantern", "Tide",
        "Comet", "Orchard", "Signal", "Canyon", "Feather", "Prophet", "Circus", "Temple", "Satellite", "Meadow",
        "Thunder", "Echo", "Shadow", "Highway", "Ocean", "Fever", "Kingdom", "Parade", "Window", "Stranger",
        "Violet", "Anchor", "Horizon", "Ghost", "Desert", "Winter", "Summer", "Island", "Rocket", "Diamond",
    ]
    static let accented = [
        "Beyoncé", "Sigur Rós", "Mötley Crüe", "Björk", "Motörhead", "Céline Dion", "Zoë Keating", "Ólafur Arnalds",
        "Françoise Hardy", "Antonín Dvořák", "Édith Piaf", "Jóhann Jóhannsson", "Mão Morta", "Ñu", "Hüsker Dü",
        "Blue Öyster Cult", "Røyksopp", "Mañana", "Árstíðir", "Dvořák Ensemble", "Sébastien Tellier", "Amón Tobín",
        "Løv & Ljung", "Zaz Émilie", "Caetano Veloso", "Gabriel Fauré", "Camille Saint-Saëns", "Ennio Morricone",
    ]
    /// (kanji, kana reading)
    static let japaneseFamily = [
        ("宇多田", "うただ"), ("山下", "やました"), ("中島", "なかじま"), ("松任谷", "まつとうや"), ("坂本", "さかもと"),
        ("久保田", "くぼた"), ("椎名", "しいな"), ("浜崎", "はまさき"), ("小沢", "おざわ"), ("細野", "ほその"),
        ("竹内", "たけうち"), ("矢野", "やの"), ("大貫", "おおぬき"), ("吉田", "よしだ"), ("渡辺", "わたなべ"),
        ("藤井", "ふじい"), ("米津", "よねづ"), ("星野", "ほしの"), ("林", "はやし"), ("森山", "もりやま"),
    ]
    static let japaneseGiven = [
        ("ヒカル", "ひかる"), ("達郎", "たつろう"), ("みゆき", "みゆき"), ("由実", "ゆみ"), ("龍一", "りゅういち"),
        ("林檎", "りんご"), ("あゆみ", "あゆみ"), ("健二", "けんじ"), ("晴臣", "はるおみ"), ("まりや", "まりや"),
        ("顕子", "あきこ"), ("妙子", "たえこ"), ("美奈子", "みなこ"), ("風", "かぜ"), ("玄師", "けんし"),
        ("源", "げん"), ("直太朗", "なおたろう"), ("優子", "ゆうこ"),
    ]
    static let kanaArtists = [
        "ゆず", "いきものがかり", "スピッツ", "サカナクション", "きゃりーぱみゅぱみゅ", "ポルノグラフィティ",
        "ミスチル", "ゆらゆら帝国", "くるり", "ハナレグミ", "モーニング娘。", "アジカン", "ラルク", "わたなべ",
    ]
    /// (kanji, kana reading)
    static let japaneseWords = [
        ("花", "はな"), ("夜", "よる"), ("空", "そら"), ("海", "うみ"), ("雨", "あめ"), ("桜", "さくら"),
        ("光", "ひかり"), ("風", "かぜ"), ("夢", "ゆめ"), ("月", "つき"), ("星", "ほし"), ("道", "みち"),
        ("涙", "なみだ"), ("心", "こころ"), ("春", "はる"), ("恋", "こい"), ("声", "こえ"), ("街", "まち"),
    ]
    static let kanaWords = ["さよなら", "ありがとう", "ひとり", "キラキラ", "ドライブ", "メロディー", "ワルツ", "ロマンス", "ラブソング"]
    static let hangulSyllables = Array("가나다라마바사아자차카타파하방탄소년단아이유블랙핑크빅뱅트와이스레드벨벳")
    static let cyrillicWords = [
        "Кино", "Аквариум", "Земфира", "Сплин", "Ленинград", "Мумий Тролль", "Ария", "Наутилус", "Любэ",
        "Звезда", "Ночь", "Город", "Лето", "Река", "Песня", "Ветер", "Память", "Дорога",
    ]
    static let symbolic = [
        "808 State", "!!!", "+44", "2Pac", "10cc", "50 Cent", "$uicideboy$", "(hed) p.e.", "#1 Dads", "311",
        "…And You Will Know Us", "3 Doors Down", "[Ensemble]", "+/-", "¡Forward, Russia!", "4 Non Blondes", "99 Posse",
    ]
    static let genres = [
        "Rock", "Pop", "Jazz", "Classical", "Electronic", "Hip-Hop", "J-Pop", "K-Pop", "Folk", "Metal",
        "Soundtrack", "Ambient", "Blues", "R&B", "Country", "Reggae", "Post-Rock", "Indie", "Soul", "Chanson",
    ]
    static let blanks = ["", " ", "\u{3000}", "\t", "  \u{3000} ", "\u{00A0}"]
}
