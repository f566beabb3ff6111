// Answers to an offer's application questions (spec 2.2 `answers`, D5 `applicationQuestions`, D10): which
// value fits which question type. One rule for the team's PATCH and a family's own application.

export const QUESTION_TYPES = ['yn', 'int', 'txt', 'file'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export type ApplicationQuestion = { uuid: string; label: string; type: QuestionType; required: boolean };
export type AnswerValue = string | boolean | number;

/** The longest free-text answer. */
export const MAX_TEXT_ANSWER = 10_000;

/** What each type takes, for the violation's message. */
export const ANSWER_TYPE_NAMES: Record<QuestionType, string> = {
  yn: 'a boolean (true or false)',
  int: 'a whole number',
  txt: 'a string',
  file: "an uploaded file's UUID",
};

/**
 * Whether `value` is an answer of `type`: `yn` a boolean, `int` a whole number, `txt` a string of at most
 * MAX_TEXT_ANSWER characters, `file` a string naming a file (`isFileId` says whether it is an identifier).
 */
export function answerFits(type: QuestionType, value: AnswerValue, isFileId: (v: string) => boolean): boolean {
  switch (type) {
    case 'yn': return typeof value === 'boolean';
    case 'int': return typeof value === 'number' && Number.isInteger(value);
    case 'txt': return typeof value === 'string' && value.length <= MAX_TEXT_ANSWER;
    case 'file': return typeof value === 'string' && isFileId(value);
  }
}

/** Whether a required question counts as answered: any value but an empty (or blank) text. */
export function isAnswered(value: AnswerValue | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  return typeof value !== 'string' || value.trim() !== '';
}
