"""The target model and the drafter next to the data: identify, conventions, accept, vocab. Shipped to the box."""
