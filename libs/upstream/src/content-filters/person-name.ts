import { classOf, isLetter, SPACE, sortDedupe, UPPER, type Detector } from "./text.js";

const upper = "A-ZÀ-ÖØ-Þ";
const lower = "a-zß-öø-ÿ";
/** One capitalised name word: Smith, O'Brien, McDonald, Smith-Jones, Müller. */
const nameWord = `[${upper}][${lower}'’]*(?:[${upper}][${lower}]+)?(?:-[${upper}][${lower}]+)?`;
const nameWords = String.raw`${nameWord}(?:[ \t]+${nameWord}){0,2}`;

/**
 * Common given names from many languages, chosen to be names first: words that are as often something else
 * (Will, Mark, Grace, May, Jordan, Austin, Ruby, Max) are left out, so "Max Tokens" is not a person.
 */
const givenNames = new Set(
  `James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony Donald
Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan Jacob Gary Nicholas
Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank Patrick Raymond Dennis
Jerry Tyler Aaron Adam Nathan Henry Douglas Zachary Peter Kyle Ethan Walter Noah Jeremy Keith Roger Terry Gerald
Harold Sean Carl Arthur Lawrence Dylan Jesse Bryan Billy Bruce Gabriel Logan Albert Alan Wayne Elijah Randy Roy
Vincent Ralph Eugene Russell Bobby Philip Louis Liam Oliver Lucas Owen Caleb Isaac Luke Connor Evan Ian Leo Oscar
Simon Martin Colin Neil Graham Hugh Stuart Trevor Derek Craig Marcus Victor Howard Fred Jim Tom Bob Mike Dave
Steve Chris Tony Matt Dan Ben Sam Alex Nick Tim Andy Greg Jeff Ted Ron Ken Jon Josh Jake Jack Harry Charlie Alfie
Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Margaret Sandra Ashley
Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah Stephanie Rebecca Sharon Laura Cynthia Kathleen
Amy Angela Shirley Anna Brenda Pamela Emma Nicole Helen Samantha Katherine Christine Debra Rachel Carolyn Janet
Catherine Maria Heather Diane Ruth Julie Olivia Joyce Kelly Lauren Christina Joan Evelyn Judith Megan Andrea Cheryl
Hannah Jacqueline Martha Gloria Teresa Ann Sara Frances Kathryn Janice Jean Abigail Alice Judy Sophia Isabella Ava
Mia Amelia Chloe Ella Zoe Lily Natalie Claire Lucy Sophie Eleanor Audrey Alison Jane Kate Beth Jenny Sue Liz Meg
Molly Erin Tracy Wendy Paula Diana Fiona Gemma Brooke Emilia Nora
Jose José Juan Carlos Luis Miguel Javier Alejandro Francisco Antonio Manuel Pedro Diego Pablo Sergio Fernando Jorge
Ricardo Eduardo Rafael Andres Andrés Mateo Sofia Sofía Lucia Lucía Valentina Camila Isabel Carmen Ana Elena Marta
Beatriz Gabriela Fernanda Mariana Daniela Ximena Guadalupe Joao João Rodrigo Thiago Gonçalo Inês
Pierre Michel Philippe Alain Nicolas François Julien Antoine Mathieu Camille Chloé Manon Léa Juliette Amélie
Margaux Élodie Sébastien Thierry Olivier Mathilde Guillaume
Hans Klaus Jürgen Stefan Wolfgang Uwe Dieter Lukas Felix Jonas Leon Tobias Florian Sebastian Matthias Katrin
Ursula Sabine Petra Monika Anke Greta Lena Johanna Anja Lars Anders Henrik Nils Erik Sven Magnus Björn Bjorn
Ingrid Astrid Sigrid Freya Elin Johan Pieter Joost Sanne Femke Maarten Bram Daan
Giuseppe Giovanni Marco Luca Francesco Alessandro Matteo Lorenzo Stefano Giulia Chiara Francesca Alessia Martina
Federica Elisa Roberta Paolo Davide Simone Riccardo
Ivan Dmitri Dmitry Sergei Sergey Alexei Andrei Mikhail Vladimir Nikolai Olga Natasha Natalia Tatiana Irina
Svetlana Anastasia Ekaterina Katarzyna Agnieszka Piotr Tomasz Krzysztof Pavel Jakub Marek Zuzana Tereza Oksana
Yulia Bogdan
Mohammed Muhammad Mohamed Ahmed Ahmad Ali Omar Hassan Hussein Youssef Yusuf Ibrahim Khalid Mustafa Karim Tariq
Hamza Bilal Fatima Aisha Layla Leila Mariam Maryam Noor Zainab Yasmin Samira Amira Reza Mehdi Parisa Shirin
Mehmet Emre Burak Elif Zeynep Ayşe Murat
Rahul Amit Arjun Rohan Vikram Sanjay Ravi Suresh Rajesh Anil Priya Ananya Pooja Neha Deepika Kavya Lakshmi Sunita
Anjali Divya Aditya Arun Kiran Vijay Imran Farhan Ayesha Sana
Wei Ming Jing Xiaoming Hiroshi Takashi Kenji Yuki Haruto Akira Satoshi Naoko Yoko Keiko Sakura Yumi Aiko Minjun
Jiwoo Seojun Jisoo Minji Hyun Jiho Thanh Minh Linh Huong
Kwame Kofi Abena Chinedu Chiamaka Ngozi Oluwaseun Tunde Sipho Thabo Nomvula Amara Themba Wanjiru Wanjiku Kamau
Abebe Tendai Farai`.split(/\s+/),
);

/** Capitalised words that follow a given name without being a surname. */
const notSurnames = new Set(
  `The And Or But Nor So Yet If In On At To For From With By Of As Is Are Was Were Be Been Has Have Had Do Does Did
Will Would Can Could Should May Might Must Said Says Not No Yes Also Then Than This That These Those He She It We
They You I Me My Our Your His Her Its Their Who What When Where Why How Which Thanks Thank Hi Hello Dear Please
Street Avenue Road Lane Drive Court Boulevard Way Place Square Park University College School Hospital Church
Inc Ltd Corp Company Group Foundation Institute Center Centre Monday Tuesday Wednesday Thursday Friday Saturday
Sunday January February March April June July August September October November December`.split(/\s+/),
);

const honorifics = new Set("Mr Mrs Ms Mx Miss Dr Prof Sir Dame Lady Lord Rev Capt Sgt Lt Col".split(" "));
const afterHonorific = new RegExp(String.raw`\.?[ \t]+(${nameWords})`, "y");
const introduction = new RegExp(String.raw`(?:[Mm]y name(?: is|'s|’s)|[Cc]all me|I am|I'm|I’m)[ \t]+(${nameWords})`, "y");
const surnameAt = new RegExp(String.raw`[ \t]+(?:[${upper}]\.[ \t]+)?(${nameWord})`, "y");

const isSurname = (word: string) => word.length >= 2 && /[a-zß-öø-ÿ]/.test(word) && !notSurnames.has(word);

/** Extends a name over up to `max` more words that can be surnames; returns its end. */
function surnamesAfter(text: string, at: number, max: number): number {
  let end = at;
  for (let i = 0; i < max; i++) {
    surnameAt.lastIndex = end;
    const m = surnameAt.exec(text);
    if (!m || !isSurname(m[1]!)) break;
    end = surnameAt.lastIndex;
  }
  return end;
}

/** Where the name words `name` (found at `start`) end, trailing words that are not names left out. */
function nameEnd(text: string, start: number, name: string): number {
  const words = name.split(/[ \t]+/);
  let end = start + words[0]!.length;
  for (const word of words.slice(1)) {
    if (!isSurname(word)) break;
    end = text.indexOf(word, end) + word.length;
  }
  return end;
}

/** Whether the word at `i` (`length` letters) can start "my name is", "call me" or "I am" / "I'm". */
function introductionCue(codes: Uint16Array, i: number, length: number): boolean {
  const first = codes[i]! | 0x20;
  if (first === 109) return length === 2 && (codes[i + 1]! | 0x20) === 121; // my
  if (first === 99) return length === 4 && (codes[i + 1]! | 0x20) === 97; // call
  return codes[i] === 73 && length === 1; // I
}

/**
 * Person names, precise rather than greedy. Found: capitalised name words after an honorific ("Dr. Jane
 * Smith": the name, not the honorific); a given name from the list followed by one or two capitalised
 * surnames ("Priya Raman", "John F. Kennedy"); the name after "my name is" or "call me", and after "I am" /
 * "I'm" when it is two words ("I am French" is not a name). Not found: names without a listed given name or
 * a cue ("Smith said"), lowercase names, names in scripts other than Latin, given names left out of the list
 * for being common words. A listed given name before capitalised words that are not names is taken with
 * them ("Emma Watson Fan Club" loses "Emma Watson Fan").
 */
export const detectPersonName: Detector = (scan, found) => {
  const { text, codes, words } = scan;
  const before = found.length;
  const add = (start: number, end: number) => {
    if (end > start) found.push({ start, end });
    return end;
  };
  let reach = 0;
  for (let w = 0; w < words.length; w++) {
    const i = words[w]!;
    const upperFirst = classOf(codes[i]!) === UPPER;
    if (i < reach || (!upperFirst && codes[i] !== 109 && codes[i] !== 99)) continue; // capitalised, or "my", "call"
    let end = i + 1;
    while (end < codes.length && isLetter(codes[end]!)) end++;
    const length = end - i;
    if (introductionCue(codes, i, length)) {
      introduction.lastIndex = i;
      const m = introduction.exec(text);
      if (m && !notSurnames.has(m[1]!.split(/[ \t]/)[0]!)) {
        const start = introduction.lastIndex - m[1]!.length;
        const last = nameEnd(text, start, m[1]!);
        const oneWordEnough = codes[i] !== 73;
        if (oneWordEnough || /[ \t]/.test(text.slice(start, last))) reach = add(start, last);
        continue;
      }
    }
    if (!upperFirst) continue;
    if (length <= 4 && honorifics.has(text.slice(i, end))) {
      afterHonorific.lastIndex = end;
      const m = afterHonorific.exec(text);
      if (m && !notSurnames.has(m[1]!.split(/[ \t]/)[0]!)) {
        const start = afterHonorific.lastIndex - m[1]!.length;
        reach = add(start, nameEnd(text, start, m[1]!));
      }
      continue;
    }
    if (length < 2 || length > 15) continue;
    let next = end;
    while (codes[next] === SPACE || codes[next] === 9) next++;
    if (next === end || classOf(codes[next] ?? 0) !== UPPER || !givenNames.has(text.slice(i, end))) continue;
    const last = surnamesAfter(text, end, 2);
    if (last > end) reach = add(i, last);
  }
  sortDedupe(found, before);
};
