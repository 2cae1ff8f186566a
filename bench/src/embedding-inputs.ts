/**
 * The texts of an embeddings request: 16 passages of 60–100 words each, on different subjects, as a
 * retrieval pipeline cuts a knowledge base into chunks before it embeds them. Fixed text, so every run and
 * every target embeds the same inputs.
 */
export const embeddingInputs: readonly string[] = [
  "Invoices are issued on the first business day of each month and cover the usage of the month before. " +
    "Each invoice lists the workspace, the billing contact, the period and one line per product, with the quantity, " +
    "the unit price and the amount. Credits bought in advance are applied before any card is charged. When a " +
    "payment fails, the billing contact receives an email at once, and the card is retried after three and after seven days.",
  "To rotate an API key without downtime, create the new key first and deploy it to every service that calls " +
    "the gateway. Watch the dashboard until the old key's requests fall to zero, which usually takes one deploy " +
    "cycle, then revoke it. Revoked keys are refused within a minute on every replica. Keep the key's name descriptive, " +
    "such as the team and environment, because that name is what the usage reports show.",
  "The warehouse in Rotterdam receives inbound containers between six in the morning and two in the afternoon. " +
    "Drivers must book a slot at least twenty-four hours ahead and bring the packing list and the customs reference. " +
    "Pallets higher than one metre eighty are refused at the dock. Temperature-controlled goods go to hall C, where " +
    "the loggers are read on arrival and the readings are attached to the delivery record.",
  "Our return policy allows customers to send back unused items within thirty days of delivery. The item must be in " +
    "its original packaging with all accessories and the receipt or order number. Refunds go to the original payment " +
    "method within five to ten business days after the parcel reaches us. Personalised products, gift cards and opened " +
    "software cannot be returned unless they arrived damaged or faulty.",
  "When a patient arrives for a first appointment, reception checks the photo identification and the insurance card " +
    "and confirms the contact details. The patient completes a short questionnaire about current medication, allergies " +
    "and previous surgery, on paper or on the tablet in the waiting room. The nurse then measures blood pressure, weight " +
    "and height before the consultation begins, and records everything in the electronic file.",
  "The database migration runs in three phases. First, the new columns are added as nullable, and the application " +
    "writes to both the old and the new columns. Second, a background job copies existing rows in batches of ten " +
    "thousand, pausing whenever replication lag exceeds five seconds. Third, once every row is copied and verified, " +
    "reads switch to the new columns and the old ones are dropped in a later release.",
  "Sourdough needs a lively starter: feed it twelve hours before baking with equal weights of flour and water, and use " +
    "it when it has doubled and smells pleasantly sour. Mix the flour and water first and let them rest for an hour " +
    "before adding the starter and salt. Stretch and fold the dough four times during the first two hours, then let it " +
    "rise slowly in the refrigerator overnight.",
  "Employees may work remotely up to three days a week, agreed with their manager and recorded in the team calendar. " +
    "The company pays a monthly allowance towards internet and electricity and provides a laptop, a monitor and a chair " +
    "on request. Remote work from another country is limited to twenty days a year, and any stay longer than that needs " +
    "approval from human resources and the tax adviser.",
  "The pump must be switched off and isolated before any maintenance. Close the inlet and outlet valves, open the drain " +
    "and wait until the pressure gauge reads zero. Inspect the impeller for wear and the mechanical seal for leaks, and " +
    "replace the seal if more than a few drops per minute escape while the pump runs. Log the operating hours and the " +
    "work done on the maintenance card.",
  "Rate limits protect the service from bursts that would slow down every customer. Each key may send a fixed number " +
    "of requests per minute, shown in its settings, and requests beyond that receive a 429 answer with a retry-after " +
    "header. Clients should wait the indicated number of seconds and retry with exponential backoff and jitter. Higher " +
    "limits are available on request for workloads with a steady, predictable volume.",
  "The quarterly report shows revenue of forty-two million euros, eleven percent more than the same quarter last year, " +
    "driven mostly by new enterprise contracts in Germany and the Nordic countries. Gross margin improved to sixty-one " +
    "percent as hosting costs fell after the move to reserved capacity. Operating expenses rose with the hiring of " +
    "thirty engineers, and the company remains cash-flow positive for the fifth quarter in a row.",
  "To reset a forgotten password, open the sign-in page and choose the link below the password field. Enter the email " +
    "address of the account, and a message with a single-use link arrives within a few minutes; check the spam folder if " +
    "it does not. The link expires after one hour. Accounts protected with single sign-on cannot reset their password here " +
    "and must contact their identity administrator.",
  "Tomatoes grow best in a sunny spot sheltered from the wind, in soil enriched with compost. Plant them deep, burying " +
    "part of the stem, since new roots form along it. Water at the base in the morning rather than on the leaves, which " +
    "helps prevent blight. Remove the side shoots of cordon varieties every week, and feed with a potassium-rich " +
    "fertiliser once the first flowers appear.",
  "Incident severity is decided by the on-call engineer within fifteen minutes of the first alert. A first-level " +
    "incident means customers cannot use a core feature, and it requires an incident commander, a status page update " +
    "every thirty minutes and a written review within five working days. Lower levels are handled within the team, and " +
    "their timeline is recorded in the ticket so patterns can be found later.",
  "The museum's new wing houses the collection of Flemish tapestries, shown in rooms with low light and controlled " +
    "humidity to protect the wool and silk. Guided tours start every hour from the main hall and last about forty-five " +
    "minutes. Photography without flash is allowed in the permanent collection but not in temporary exhibitions. The " +
    "café on the top floor overlooks the river and serves lunch until three.",
  "A contract renewal starts ninety days before the end date, when the account manager reviews usage, open support " +
    "tickets and any discounts that expire. The customer receives the proposed terms sixty days ahead and may ask for " +
    "changes to the volume, the term or the service levels. If nothing is signed by the end date, the contract continues " +
    "month to month at list price until a new agreement is in place.",
];
