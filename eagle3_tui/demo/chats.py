"""The demo's chats: system prompts, user questions and assistant answers, and their template.

The demo trains its tokenizer on these and tokenizes them into its training samples, so every
view that shows token text shows real text. Some are not ASCII (accents, Japanese, Chinese,
Greek, emoji) so that multi-byte characters cross token boundaries.
"""

from __future__ import annotations

SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]  # ids 0..3; SpecForge pads with 0

SYSTEMS = [
    "You are a helpful assistant.",
    "You are a concise assistant. Answer in a few sentences.",
    "You are a patient tutor who explains things step by step.",
]

# (user question, assistant answer)
CHATS = [
    ("What is the capital of France?",
     "The capital of France is Paris. It sits on the Seine, in the north of the country, and has been "
     "the seat of government for most of the last thousand years."),
    ("How do I reverse a list in Python?",
     "Use slicing or the method:\n\n    items[::-1]      # a new, reversed list\n    items.reverse()  # in place\n\n"
     "The slice leaves the original alone; reverse() changes it and returns None."),
    ("Écris un haïku sur le café ☕",
     "Café noir, matin —\nla tasse fume en silence,\nle jour se réveille."),
    ("日本語で挨拶してください。",
     "こんにちは！はじめまして。今日はいい天気ですね。何かお手伝いできることはありますか？"),
    ("Why is the sky blue?",
     "Sunlight is scattered by the molecules of the air, and short wavelengths scatter much more than long "
     "ones (Rayleigh scattering goes as one over the fourth power of the wavelength). Blue light is "
     "scattered all over the sky, so the sky looks blue; at sunset the light crosses more air and the "
     "reds are left."),
    ("Sum 2 and 3, then double it.",
     "First the sum: 2 + 3 = 5. Then double it: 5 × 2 = 10. So the answer is 10."),
    ("What does EAGLE-3 train on?",
     "An EAGLE-3 drafter is trained on hidden states of the target model: three auxiliary layers, low, "
     "middle and high, concatenated for every token, and the target's own next tokens. At inference the "
     "engine must capture the same layers in the same order, or the drafter reads the wrong features."),
    ("Give me three tips for sleeping better.",
     "1. Go to bed and get up at the same time every day.\n2. Keep the bedroom dark, quiet and cool.\n"
     "3. Avoid coffee after lunch and screens in the last hour before sleep."),
    ("Wie spät ist es in Tokio, wenn es in Berlin 9 Uhr ist?",
     "Tokio ist Berlin im Winter acht Stunden voraus, im Sommer sieben. Um 9 Uhr in Berlin ist es in Tokio "
     "also 17 Uhr (Winter) oder 16 Uhr (Sommer)."),
    ("Explain recursion to a child.",
     "Imagine you are in a line of people and want to know your place. You ask the person in front of you "
     "what their place is, and they ask the person in front of them, and so on, until the first person "
     "says \"one\". Then each person adds one and passes the answer back. That is recursion."),
    ("What is 15% of 240?",
     "15% means 15 hundredths, so multiply: 0.15 × 240 = 36. A quick check: 10% of 240 is 24, 5% is 12, "
     "and 24 + 12 = 36."),
    ("Translate \"good morning\" into Spanish, Italian and Greek.",
     "Spanish: buenos días. Italian: buongiorno. Greek: καλημέρα (kaliméra)."),
    ("Write a shell command that counts the lines of every .py file.",
     "This one does it:\n\n    find . -name '*.py' -print0 | xargs -0 wc -l\n\n"
     "find lists the files, -print0 and -0 keep names with spaces intact, and wc -l prints one count per "
     "file plus a total."),
    ("什么是机器学习？",
     "机器学习是人工智能的一个分支：计算机从数据中学习规律，而不是由人写下每一条规则。例如，看过很多猫的照片之后，"
     "模型就能认出新的猫。"),
    ("Is a tomato a fruit or a vegetable?",
     "Botanically a tomato is a fruit: it grows from the flower and holds the seeds. In the kitchen it is "
     "treated as a vegetable because it is savoury rather than sweet."),
    ("How many bytes is the emoji 🚀 in UTF-8?",
     "Four. 🚀 is U+1F680, above U+FFFF, so UTF-8 writes it as four bytes: F0 9F 9A 80. In UTF-16 it "
     "takes a surrogate pair, also four bytes."),
    ("Summarise the plot of Romeo and Juliet in two sentences.",
     "Two young lovers from feuding families in Verona marry in secret. A chain of misunderstandings "
     "ends with both taking their own lives, which finally reconciles the families."),
    ("What is the difference between a list and a tuple?",
     "A list is mutable: you can append, remove and change items. A tuple is immutable once made, so it "
     "can be a dictionary key or a set member, and it signals that the values belong together, like a "
     "point (x, y)."),
    ("Recommend a book for learning statistics.",
     "Try \"The Art of Statistics\" by David Spiegelhalter: it teaches the ideas with real questions "
     "before any formulas. For more mathematics afterwards, \"All of Statistics\" by Larry Wasserman is a "
     "compact next step."),
    ("Convert 100 degrees Fahrenheit to Celsius.",
     "C = (F − 32) × 5/9, so (100 − 32) × 5/9 = 68 × 5/9 ≈ 37.8 °C."),
    ("Why do cats purr?",
     "Cats purr when they are content, but also when they are stressed or hurt. The sound comes from the "
     "muscles of the larynx twitching 25 to 150 times a second, and some studies suggest the vibration "
     "helps bones and tissue heal."),
    ("Write a haiku about the sea.",
     "Grey waves fold and break,\nsalt wind carries the gulls' cries,\nthe tide keeps its time."),
    ("What is a hash map?",
     "A hash map stores key-value pairs in an array of buckets. A hash function turns the key into a "
     "bucket index, so lookups, inserts and deletes take constant time on average; collisions are "
     "handled by chaining or probing."),
    ("Dis-moi une blague courte.",
     "Pourquoi les plongeurs plongent-ils toujours en arrière ? Parce que sinon, ils tombent dans le "
     "bateau ! 😄"),
    ("How far is the Moon?",
     "About 384,400 km on average. The orbit is an ellipse, so the distance varies between roughly "
     "363,000 km at perigee and 405,000 km at apogee; light covers it in about 1.3 seconds."),
    ("Give me a regular expression for an email address.",
     "A practical one is\n\n    ^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$\n\nIt checks for one @ and a dot in the "
     "domain. No regex validates every legal address; send a confirmation mail instead."),
    ("What should I pack for a weekend hike?",
     "Water, food, a map, a head torch, a first-aid kit, rain gear, a warm layer, sun protection, and a "
     "charged phone. Tell someone your route and when you expect to be back."),
    ("Explain what a GPU is good at.",
     "A GPU runs thousands of simple threads at once, so it is fast at work that applies the same "
     "operation to lots of data: matrix multiplications, image filters, and the layers of a neural "
     "network."),
    ("¿Cuál es el río más largo del mundo?",
     "Depende de cómo se mida: el Nilo (unos 6.650 km) y el Amazonas (entre 6.400 y 7.000 km) se disputan "
     "el primer puesto."),
    ("How do I make a cup of green tea?",
     "Heat the water to about 80 °C, not boiling. Use one teaspoon of leaves per cup, steep for two to "
     "three minutes, then strain. Hotter water or longer steeping makes it bitter."),
    ("What is the Pythagorean theorem?",
     "In a right triangle, the square of the hypotenuse equals the sum of the squares of the other two "
     "sides: a^2 + b^2 = c^2. A 3-4-5 triangle is the classic example: 9 + 16 = 25."),
    ("Name the planets in order.",
     "Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus, Neptune. A mnemonic: My Very Educated "
     "Mother Just Served Us Noodles."),
]


def chat_text(system: str, user: str, answer: str) -> tuple[str, str]:
    """(prompt, answer) of one chat in the ChatML template; the loss mask covers the answer part
    (the assistant's text and its <|im_end|>)."""
    prompt = (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
              "<|im_start|>assistant\n")
    return prompt, f"{answer}<|im_end|>"


def corpus() -> list[str]:
    """Every chat under every system prompt: what the demo's tokenizer is trained on."""
    return ["".join(chat_text(s, u, a)) for s in SYSTEMS for u, a in CHATS]
